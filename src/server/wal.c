/* Write-ahead log and snapshots; see wal.h for the file formats. */
#include "wal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <xxhash.h>

#include "server_internal.h"

#define SNAP_MAGIC UINT64_C(0x31504E5342444643) /* "CFDBSNP1" */
#define SNAPSHOT_AFTER_BYTES (64u << 20)

typedef struct srv_wal {
    char *dir;
    int fd;
    uint64_t size;
    int64_t snapshot_version;
} srv_wal;

typedef struct wbuf {
    uint8_t *p;
    size_t len, cap;
} wbuf;

static int wput(wbuf *b, const void *d, size_t n)
{
    if (n == 0)
        return 0;
    if (b->len + n > b->cap) {
        size_t nc = (b->cap ? b->cap * 2 : 4096) + n;
        uint8_t *np = realloc(b->p, nc);
        if (!np)
            return -1;
        b->p = np;
        b->cap = nc;
    }
    memcpy(b->p + b->len, d, n);
    b->len += n;
    return 0;
}

static char *path_join(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = malloc(n);
    if (p)
        snprintf(p, n, "%s/%s", dir, name);
    return p;
}

static int write_all(int fd, const void *buf, size_t n)
{
    const uint8_t *p = buf;
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static int fsync_dir(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    int rc = fsync(fd);
    close(fd);
    return rc;
}

static uint8_t *read_file(const char *path, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    struct stat st;
    if (fstat(fd, &st)) {
        close(fd);
        return NULL;
    }
    size_t n = (size_t)st.st_size;
    uint8_t *p = malloc(n ? n : 1);
    size_t got = 0;
    while (p && got < n) {
        ssize_t r = read(fd, p + got, n - got);
        if (r <= 0) {
            if (r < 0 && errno == EINTR)
                continue;
            break;
        }
        got += (size_t)r;
    }
    close(fd);
    *len = got;
    return p;
}

/* ---- snapshot ---- */

static int load_snapshot(srv *s, const char *path, int64_t *version)
{
    size_t len = 0;
    uint8_t *p = read_file(path, &len);
    *version = 0;
    if (!p)
        return errno == ENOENT ? 0 : -1;
    int rc = -1;
    uint64_t magic, count;
    if (len < 32)
        goto out;
    uint64_t h;
    memcpy(&h, p + len - 8, 8);
    if (XXH3_64bits(p, len - 8) != h)
        goto out;
    memcpy(&magic, p, 8);
    memcpy(version, p + 8, 8);
    memcpy(&count, p + 16, 8);
    if (magic != SNAP_MAGIC)
        goto out;
    size_t off = 24, end = len - 8;
    cfdb_mutation *m = malloc(sizeof(*m) * (count ? count : 1));
    if (!m)
        goto out;
    uint64_t i;
    for (i = 0; i < count; i++) {
        uint32_t kl, vl;
        if (off + 4 > end)
            break;
        memcpy(&kl, p + off, 4);
        off += 4;
        if (off + kl + 4 > end)
            break;
        m[i].type = CFDB_MUT_SET_VALUE;
        m[i].param1 = cfdb_bytes_make(p + off, kl);
        off += kl;
        memcpy(&vl, p + off, 4);
        off += 4;
        if (off + vl > end)
            break;
        m[i].param2 = cfdb_bytes_make(p + off, vl);
        off += vl;
    }
    if (i == count && *version > 0)
        rc = cfdb_mvcc_apply(s->store, *version, m, count) == 0 ? 0 : -1;
    free(m);
out:
    free(p);
    if (rc)
        fprintf(stderr, "cfdb-server: snapshot %s is corrupt\n", path);
    return rc;
}

int srv_wal_snapshot(srv *s)
{
    srv_wal *w = s->wal;
    int64_t v = cfdb_mvcc_latest_version(s->store);
    wbuf b = { 0 };
    uint64_t magic = SNAP_MAGIC, count = 0;
    int rc = -1;
    if (wput(&b, &magic, 8) || wput(&b, &v, 8) || wput(&b, &count, 8))
        goto out;
    cfdb_mvcc_iter it;
    for (cfdb_mvcc_iter_seek_ge(&it, s->store, v, (cfdb_bytes){ 0, 0 }); cfdb_mvcc_iter_valid(&it);
         cfdb_mvcc_iter_next(&it)) {
        uint32_t kl = it.key.len, vl = it.value.len;
        if (wput(&b, &kl, 4) || wput(&b, it.key.ptr, kl) || wput(&b, &vl, 4) || wput(&b, it.value.ptr, vl))
            goto out;
        count++;
    }
    memcpy(b.p + 16, &count, 8);
    uint64_t h = XXH3_64bits(b.p, b.len);
    if (wput(&b, &h, 8))
        goto out;
    char *tmp = path_join(w->dir, "snapshot.tmp"), *fin = path_join(w->dir, "snapshot");
    char *log = path_join(w->dir, "wal");
    if (tmp && fin && log) {
        int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd >= 0) {
            if (write_all(fd, b.p, b.len) == 0 && fsync(fd) == 0 && close(fd) == 0 && rename(tmp, fin) == 0 &&
                fsync_dir(w->dir) == 0) {
                /* the snapshot covers everything logged: start an empty log */
                if (ftruncate(w->fd, 0) == 0 && lseek(w->fd, 0, SEEK_SET) == 0 && fsync(w->fd) == 0) {
                    w->size = 0;
                    w->snapshot_version = v;
                    rc = 0;
                }
            } else {
                close(fd);
            }
        }
    }
    free(tmp);
    free(fin);
    free(log);
out:
    free(b.p);
    if (rc)
        srv_log(s, "snapshot failed");
    return rc;
}

void srv_wal_maybe_snapshot(srv *s)
{
    if (s->wal && s->wal->size >= SNAPSHOT_AFTER_BYTES)
        srv_wal_snapshot(s);
}

/* ---- log ---- */

int srv_wal_append(srv *s, int64_t version, const cfdb_mutation *m, size_t n)
{
    srv_wal *w = s->wal;
    wbuf b = { 0 };
    uint32_t zero32 = 0;
    uint64_t zero64 = 0;
    int rc = -1;
    uint32_t cnt = (uint32_t)n;
    if (wput(&b, &zero32, 4) || wput(&b, &zero64, 8) || wput(&b, &version, 8) || wput(&b, &cnt, 4))
        goto out;
    for (size_t i = 0; i < n; i++) {
        uint32_t l1 = m[i].param1.len, l2 = m[i].param2.len;
        if (wput(&b, &m[i].type, 1) || wput(&b, &l1, 4) || wput(&b, m[i].param1.ptr, l1) || wput(&b, &l2, 4) ||
            wput(&b, m[i].param2.ptr, l2))
            goto out;
    }
    uint32_t plen = (uint32_t)(b.len - 12);
    uint64_t h = XXH3_64bits(b.p + 12, plen);
    memcpy(b.p, &plen, 4);
    memcpy(b.p + 4, &h, 8);
    if (write_all(w->fd, b.p, b.len) || fdatasync(w->fd)) {
        /* cut a partial record so the log stays parseable */
        if (ftruncate(w->fd, (off_t)w->size) == 0)
            lseek(w->fd, (off_t)w->size, SEEK_SET);
        goto out;
    }
    w->size += b.len;
    rc = 0;
out:
    free(b.p);
    return rc;
}

static int replay(srv *s, const char *path, int64_t after, int64_t *newest, uint64_t *valid_len)
{
    size_t len = 0;
    uint8_t *p = read_file(path, &len);
    *valid_len = 0;
    if (!p)
        return errno == ENOENT ? 0 : -1;
    size_t off = 0;
    int rc = 0;
    while (off + 12 <= len) {
        uint32_t plen;
        uint64_t h;
        memcpy(&plen, p + off, 4);
        memcpy(&h, p + off + 4, 8);
        if (plen < 12 || off + 12 + plen > len || XXH3_64bits(p + off + 12, plen) != h)
            break; /* torn tail */
        const uint8_t *q = p + off + 12, *e = q + plen;
        int64_t v;
        uint32_t cnt;
        memcpy(&v, q, 8);
        memcpy(&cnt, q + 8, 4);
        q += 12;
        cfdb_mutation *m = malloc(sizeof(*m) * (cnt ? cnt : 1));
        if (!m) {
            rc = -1;
            break;
        }
        uint32_t i;
        for (i = 0; i < cnt; i++) {
            uint32_t l1, l2;
            if (q + 5 > e)
                break;
            m[i].type = q[0];
            memcpy(&l1, q + 1, 4);
            q += 5;
            if ((size_t)(e - q) < (size_t)l1 + 4)
                break;
            m[i].param1 = cfdb_bytes_make(q, l1);
            q += l1;
            memcpy(&l2, q, 4);
            q += 4;
            if ((size_t)(e - q) < l2)
                break;
            m[i].param2 = cfdb_bytes_make(q, l2);
            q += l2;
        }
        if (i != cnt) {
            free(m);
            break;
        }
        if (v > after && v >= cfdb_mvcc_latest_version(s->store)) {
            if (cfdb_mvcc_apply(s->store, v, m, cnt)) {
                free(m);
                rc = -1;
                break;
            }
            *newest = v;
        }
        free(m);
        off += 12 + plen;
    }
    *valid_len = off;
    free(p);
    return rc;
}

int srv_wal_open(srv *s, int64_t *recovered)
{
    *recovered = 0;
    if (mkdir(s->cfg.datadir, 0755) && errno != EEXIST) {
        fprintf(stderr, "cfdb-server: cannot create %s: %s\n", s->cfg.datadir, strerror(errno));
        return -1;
    }
    srv_wal *w = calloc(1, sizeof(*w));
    if (!w)
        return -1;
    w->fd = -1;
    w->dir = strdup(s->cfg.datadir);
    char *snap = path_join(s->cfg.datadir, "snapshot"), *log = path_join(s->cfg.datadir, "wal");
    int rc = -1;
    if (!w->dir || !snap || !log)
        goto out;
    int64_t sv = 0, newest = 0;
    uint64_t valid = 0;
    if (load_snapshot(s, snap, &sv))
        goto out;
    newest = sv;
    if (replay(s, log, sv, &newest, &valid))
        goto out;
    w->fd = open(log, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (w->fd < 0) {
        fprintf(stderr, "cfdb-server: cannot open %s: %s\n", log, strerror(errno));
        goto out;
    }
    if (ftruncate(w->fd, (off_t)valid) || lseek(w->fd, (off_t)valid, SEEK_SET) < 0 || fsync(w->fd))
        goto out;
    fsync_dir(s->cfg.datadir);
    w->size = valid;
    w->snapshot_version = sv;
    *recovered = newest;
    rc = 0;
out:
    free(snap);
    free(log);
    if (rc) {
        if (w->fd >= 0)
            close(w->fd);
        free(w->dir);
        free(w);
        return -1;
    }
    s->wal = w;
    return 0;
}

int64_t srv_wal_epoch_version(srv *s)
{
    char *path = path_join(s->cfg.datadir, "epoch");
    if (!path)
        return 0;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    int64_t now_us = (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
    int64_t epoch = 0;
    FILE *f = fopen(path, "r");
    if (f) {
        long long e = 0;
        if (fscanf(f, "%lld", &e) == 1)
            epoch = e;
        fclose(f);
    }
    if (epoch <= 0 || epoch > now_us) {
        epoch = now_us;
        char *tmp = path_join(s->cfg.datadir, "epoch.tmp");
        FILE *o = tmp ? fopen(tmp, "w") : NULL;
        if (o) {
            fprintf(o, "%lld\n", (long long)epoch);
            fflush(o);
            fsync(fileno(o));
            fclose(o);
            rename(tmp, path);
            fsync_dir(s->cfg.datadir);
        }
        free(tmp);
    }
    free(path);
    return now_us - epoch + 1000;
}

void srv_wal_close(srv *s)
{
    srv_wal *w = s->wal;
    if (!w)
        return;
    if (w->fd >= 0)
        close(w->fd);
    free(w->dir);
    free(w);
    s->wal = NULL;
}
