/* Write-ahead log: appends, recovery that tells a torn tail from corruption, frozen
 * logs, and the blocked state after a failed append. See wal.h for the files and rules;
 * snapshots are in snapshot.c. */
#include "wal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <xxhash.h>

#include "error_codes.h"
#include "srv_core.h"

#define REC_HEADER 12
#define PROBE_MIN_BYTES (1u << 20)
#define PROBE_FIRST_NS (100ull * 1000000ull)
#define PROBE_MAX_NS (2ull * 1000000000ull)
/* Versions advance about 1,000,000 a second: a later record within this distance of the
 * one before is plausible, anything else is noise (used only to find records after a
 * bad one). */
#define PLAUSIBLE_VERSION_STEP (INT64_C(1) << 50)

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
            return CFDB_ERR_UNKNOWN_ERROR;
        b->p = np;
        b->cap = nc;
    }
    memcpy(b->p + b->len, d, n);
    b->len += n;
    return 0;
}

int srv_io_error(void)
{
    int err = errno;
    return err ? cfdb_error_from_errno(err) : CFDB_ERR_IO_ERROR;
}

const char *srv_wal_path(srv_wal *w, const char *name, char *out)
{
    char *p = out ? out : w->path_buf;
    snprintf(p, SRV_WAL_MAX_PATH, "%s/%s", w->dir, name);
    return p;
}

int srv_wal_write_all(int fd, const void *buf, size_t n)
{
    const uint8_t *p = buf;
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return srv_io_error();
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

int srv_wal_fsync_dir(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return srv_io_error();
    int rc = fsync(fd) ? srv_io_error() : 0;
    int err = errno;
    close(fd);
    errno = err;
    return rc;
}

static uint8_t *read_file(const char *path, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    *len = 0;
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

static uint64_t now_ns(void)
{
    return cfdb_monotonic_ns();
}

/* ---- appends ---- */

static void block(srv *s, int err)
{
    srv_wal *w = s->wal;
    if (!w->blocked) {
        w->blocked_since_ns = now_ns();
        w->probe_backoff_ns = PROBE_FIRST_NS;
    }
    w->blocked = true;
    w->block_errno = err;
    w->next_probe_ns = now_ns() + w->probe_backoff_ns;
    srv_log(s, "cannot write %s: %s; commits wait until the log can be written again (next try in %.1f s)",
            srv_wal_path(w, "wal", NULL), strerror(err), (double)w->probe_backoff_ns / 1e9);
}

int srv_wal_append(srv *s, int64_t version, const cfdb_mutation *m, size_t n)
{
    srv_wal *w = s->wal;
    if (w->blocked)
        return CFDB_ERR_IO_ERROR;
    wbuf b = { 0 };
    uint32_t zero32 = 0;
    uint64_t zero64 = 0;
    int rc = CFDB_ERR_UNKNOWN_ERROR; /* until the record is built: out of memory */
    uint32_t cnt = (uint32_t)n;
    if (wput(&b, &zero32, 4) || wput(&b, &zero64, 8) || wput(&b, &version, 8) || wput(&b, &cnt, 4))
        goto out;
    for (size_t i = 0; i < n; i++) {
        uint32_t l1 = m[i].param1.len, l2 = m[i].param2.len;
        if (wput(&b, &m[i].type, 1) || wput(&b, &l1, 4) || wput(&b, m[i].param1.ptr, l1) || wput(&b, &l2, 4) ||
            wput(&b, m[i].param2.ptr, l2))
            goto out;
    }
    uint32_t plen = (uint32_t)(b.len - REC_HEADER);
    uint64_t h = XXH3_64bits(b.p + REC_HEADER, plen);
    memcpy(b.p, &plen, 4);
    memcpy(b.p + 4, &h, 8);
    if (w->dir_unsynced) {
        rc = srv_wal_fsync_dir(w->dir);
        if (rc) {
            block(s, errno);
            goto out;
        }
        w->dir_unsynced = false;
    }
    rc = srv_wal_write_all(w->fd, b.p, b.len);
    if (rc == 0 && fdatasync(w->fd))
        rc = srv_io_error();
    if (rc) {
        int err = errno;
        /* cut a partial record so the log stays parseable; if even that fails, the log
         * stays blocked until it succeeds (appending after garbage would turn a torn
         * tail into corruption) */
        w->dirty = !(ftruncate(w->fd, (off_t)w->size) == 0 && lseek(w->fd, (off_t)w->size, SEEK_SET) >= 0);
        block(s, err);
        goto out;
    }
    w->size += b.len;
out:
    free(b.p);
    return rc;
}

bool srv_wal_blocked(const srv *s)
{
    return s->wal && s->wal->blocked;
}

/* Whether the disk takes writes again: room for what waits (twice the queued commit
 * requests, at least 1 MB) written and fsynced in space.probe, then removed. */
static int probe_space(srv *s)
{
    srv_wal *w = s->wal;
    uint64_t need = PROBE_MIN_BYTES;
    for (size_t i = 0; i < s->ncommits; i++)
        need += 2u * (uint64_t)s->commits[i].msg_len;
    char path[SRV_WAL_MAX_PATH];
    srv_wal_path(w, "space.probe", path);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return srv_io_error();
    static const uint8_t zeros[65536];
    int rc = 0;
    for (uint64_t done = 0; rc == 0 && done < need; done += sizeof zeros)
        rc = srv_wal_write_all(fd, zeros, sizeof zeros);
    if (rc == 0 && fsync(fd))
        rc = srv_io_error();
    int err = errno;
    close(fd);
    unlink(path);
    errno = err;
    return rc;
}

static void probe(srv *s)
{
    srv_wal *w = s->wal;
    uint64_t now = now_ns();
    if (now < w->next_probe_ns)
        return;
    int rc = 0;
    if (w->dirty) {
        rc = ftruncate(w->fd, (off_t)w->size) == 0 && lseek(w->fd, (off_t)w->size, SEEK_SET) >= 0 ? 0 : srv_io_error();
        if (rc == 0)
            w->dirty = false;
    }
    if (rc == 0)
        rc = probe_space(s);
    if (rc) {
        w->block_errno = errno;
        w->probe_backoff_ns = w->probe_backoff_ns * 2 > PROBE_MAX_NS ? PROBE_MAX_NS : w->probe_backoff_ns * 2;
        w->next_probe_ns = now + w->probe_backoff_ns;
        return;
    }
    srv_log(s, "%s can be written again after %.1f s: commits resume", srv_wal_path(w, "wal", NULL),
            (double)(now - w->blocked_since_ns) / 1e9);
    w->blocked = false;
    w->block_errno = 0;
    srv_batch_schedule(s);
}

/* ---- frozen logs ---- */

/* N for "wal.N" (N >= 1, digits only), else 0. */
static uint64_t frozen_seq(const char *name)
{
    if (strncmp(name, "wal.", 4) != 0 || !name[4])
        return 0;
    uint64_t n = 0;
    for (const char *p = name + 4; *p; p++) {
        if (*p < '0' || *p > '9' || n > UINT64_MAX / 10 - 10)
            return 0;
        n = n * 10 + (uint64_t)(*p - '0');
    }
    return n;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* The frozen logs' numbers, ascending (malloc'd; *n of them). 0, or the FoundationDB code
 * when the directory cannot be read (errno says why) or memory runs out. */
static int list_frozen(const char *dir, uint64_t **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    DIR *d = opendir(dir);
    if (!d)
        return srv_io_error();
    size_t cap = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        uint64_t seq = frozen_seq(e->d_name);
        if (!seq)
            continue;
        if (*n == cap) {
            cap = cap ? cap * 2 : 8;
            uint64_t *np = realloc(*out, cap * sizeof *np);
            if (!np) {
                closedir(d);
                free(*out);
                *out = NULL;
                *n = 0;
                errno = ENOMEM;
                return CFDB_ERR_UNKNOWN_ERROR;
            }
            *out = np;
        }
        (*out)[(*n)++] = seq;
    }
    closedir(d);
    if (*n)
        qsort(*out, *n, sizeof **out, cmp_u64);
    return 0;
}

int srv_wal_rotate(srv *s)
{
    srv_wal *w = s->wal;
    if (w->blocked || w->dirty) {
        errno = w->block_errno ? w->block_errno : EIO;
        return srv_io_error();
    }
    char active[SRV_WAL_MAX_PATH], frozen[SRV_WAL_MAX_PATH], name[32];
    snprintf(name, sizeof name, "wal.%" PRIu64, w->next_seq);
    srv_wal_path(w, "wal", active);
    srv_wal_path(w, name, frozen);
    if (rename(active, frozen))
        return srv_io_error();
    int fd = open(active, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) {
        int err = errno;
        rename(frozen, active);
        errno = err;
        return srv_io_error();
    }
    /* the directory is fsynced before the first record in the new log is acknowledged
     * (srv_wal_append), not here: the loop is serving reads */
    w->dir_unsynced = true;
    close(w->fd);
    w->fd = fd;
    w->frozen_bytes += w->size;
    w->size = 0;
    w->next_seq++;
    return 0;
}

int srv_wal_drop_frozen(const char *dir, uint64_t below)
{
    uint64_t *seqs;
    size_t n;
    int rc = list_frozen(dir, &seqs, &n);
    if (rc)
        return rc;
    for (size_t i = 0; i < n; i++) {
        char path[SRV_WAL_MAX_PATH];
        snprintf(path, sizeof path, "%s/wal.%" PRIu64, dir, seqs[i]);
        if (seqs[i] < below)
            unlink(path);
    }
    free(seqs);
    return srv_wal_fsync_dir(dir);
}

/* ---- recovery ---- */

enum rec_status { REC_OK, REC_CUT_SHORT, REC_BAD_LENGTH, REC_BAD_CHECKSUM, REC_UNPARSEABLE, REC_NO_MEMORY };

static const char *rec_status_text(int st)
{
    switch (st) {
    case REC_CUT_SHORT:
        return "is cut short by the end of the file";
    case REC_BAD_LENGTH:
        return "has an impossible length";
    case REC_BAD_CHECKSUM:
        return "fails its checksum";
    case REC_UNPARSEABLE:
        return "passes its checksum but its mutations do not parse";
    default:
        return "is valid";
    }
}

/* Checks the record at off; *plen its payload length. */
static int rec_check(const uint8_t *p, size_t len, size_t off, uint32_t *plen)
{
    uint64_t h;
    if (len - off < REC_HEADER)
        return REC_CUT_SHORT;
    memcpy(plen, p + off, 4);
    memcpy(&h, p + off + 4, 8);
    if (*plen < 12)
        return REC_BAD_LENGTH;
    if ((uint64_t)*plen > len - off - REC_HEADER)
        return REC_CUT_SHORT;
    if (XXH3_64bits(p + off + REC_HEADER, *plen) != h)
        return REC_BAD_CHECKSUM;
    return REC_OK;
}

/* Parses a checked record's mutations into m (cnt of them, malloc'd); REC_NO_MEMORY when
 * that allocation fails. */
static int rec_parse(const uint8_t *q, uint32_t plen, int64_t *version, cfdb_mutation **out, uint32_t *count)
{
    const uint8_t *e = q + plen;
    uint32_t cnt;
    memcpy(version, q, 8);
    memcpy(&cnt, q + 8, 4);
    q += 12;
    *out = NULL;
    *count = 0;
    if (cnt > plen / 9) /* each mutation takes at least 9 bytes */
        return REC_UNPARSEABLE;
    cfdb_mutation *m = malloc(sizeof(*m) * (cnt ? cnt : 1));
    if (!m)
        return REC_NO_MEMORY;
    for (uint32_t i = 0; i < cnt; i++) {
        uint32_t l1, l2;
        if (e - q < 5)
            goto bad;
        m[i].type = q[0];
        memcpy(&l1, q + 1, 4);
        q += 5;
        if ((size_t)(e - q) < (size_t)l1 + 4)
            goto bad;
        m[i].param1 = cfdb_bytes_make(q, l1);
        q += l1;
        memcpy(&l2, q, 4);
        q += 4;
        if ((size_t)(e - q) < l2)
            goto bad;
        m[i].param2 = cfdb_bytes_make(q, l2);
        q += l2;
    }
    if (q != e)
        goto bad;
    *out = m;
    *count = cnt;
    return REC_OK;
bad:
    free(m);
    return REC_UNPARSEABLE;
}

/* The first position after `from` where a valid record starts whose version is plausible
 * after prev_version; len when none. *nrec and *nbytes: the valid records chained from
 * there. */
static size_t find_valid_after(const uint8_t *p, size_t len, size_t from, int64_t prev_version, size_t *nrec,
                               size_t *nbytes)
{
    *nrec = *nbytes = 0;
    for (size_t off = from + 1; off + REC_HEADER + 12 <= len; off++) {
        uint32_t plen;
        int64_t v;
        memcpy(&plen, p + off, 4);
        if (plen < 12 || (uint64_t)plen > len - off - REC_HEADER)
            continue;
        memcpy(&v, p + off + REC_HEADER, 8);
        if (v <= prev_version || v - prev_version > PLAUSIBLE_VERSION_STEP)
            continue;
        if (rec_check(p, len, off, &plen) != REC_OK)
            continue;
        size_t at = off;
        while (off < len && rec_check(p, len, off, &plen) == REC_OK) {
            (*nrec)++;
            *nbytes += REC_HEADER + plen;
            off += REC_HEADER + plen;
        }
        return at;
    }
    return len;
}

/* What replaying one log file found. */
typedef struct replay_result {
    size_t valid_len;   /* bytes of whole valid records from the start */
    size_t len;         /* file length */
    int status;         /* REC_OK: the whole file is valid */
    uint32_t bad_plen;  /* the bad record's length field */
    size_t after_at;    /* where valid records resume after the bad one (len: nowhere) */
    size_t after_records, after_bytes;
} replay_result;

static int replay_file(srv *s, const char *path, int64_t after, int64_t *newest, replay_result *r)
{
    memset(r, 0, sizeof *r);
    errno = 0;
    size_t len = 0;
    uint8_t *p = read_file(path, &len);
    if (!p)
        return errno == ENOENT ? 0 : srv_io_error();
    r->len = len;
    size_t off = 0;
    int64_t prev = 0;
    int rc = 0, st = REC_OK;
    while (off < len) {
        uint32_t plen = 0;
        st = rec_check(p, len, off, &plen);
        r->bad_plen = plen;
        if (st != REC_OK)
            break;
        int64_t v;
        cfdb_mutation *m;
        uint32_t cnt;
        st = rec_parse(p + off + REC_HEADER, plen, &v, &m, &cnt);
        if (st == REC_NO_MEMORY) {
            rc = CFDB_ERR_UNKNOWN_ERROR;
            break;
        }
        if (st != REC_OK)
            break;
        if (v > after && v >= cfdb_mvcc_latest_version(s->store)) {
            int arc = cfdb_mvcc_apply(s->store, v, m, cnt);
            if (arc) {
                fprintf(stderr, "cfdb-server: %s: the record at offset %zu (version %" PRId64 ") cannot be applied: %d\n",
                        path, off, v, arc);
                free(m);
                rc = arc;
                break;
            }
            *newest = v;
        }
        free(m);
        prev = v;
        off += REC_HEADER + plen;
    }
    r->valid_len = off;
    r->status = rc ? REC_OK : st;
    r->after_at = len;
    if (rc == 0 && st != REC_OK)
        r->after_at = find_valid_after(p, len, off, prev, &r->after_records, &r->after_bytes);
    free(p);
    return rc;
}

/* Keeps the bytes from `from` on as dir/<name>.discarded-at-<from> before they are cut. */
static int keep_discarded(const char *path, size_t from, char *kept, size_t cap)
{
    size_t len;
    uint8_t *p = read_file(path, &len);
    if (!p)
        return srv_io_error();
    snprintf(kept, cap, "%s.discarded-at-%zu", path, from);
    int fd = open(kept, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    int rc = fd >= 0 && from <= len && srv_wal_write_all(fd, p + from, len - from) == 0 && fsync(fd) == 0 ? 0 : srv_io_error();
    int err = errno;
    if (fd >= 0)
        close(fd);
    free(p);
    errno = err;
    return rc;
}

/* Corruption at r in path: refuse, or (recover_truncate) cut the log there and set every
 * later log aside; either way nothing after it is replayed. */
static int handle_corruption(srv *s, const char *path, const replay_result *r, const uint64_t *later, size_t nlater,
                             bool active_later)
{
    srv_wal *w = s->wal;
    char what[512];
    if (r->after_at < r->len)
        snprintf(what, sizeof what, "and %zu valid record(s) (%zu bytes) follow it at offset %zu", r->after_records,
                 r->after_bytes, r->after_at);
    else
        snprintf(what, sizeof what, "and %s follow%s it", nlater || active_later ? "later log files" : "no valid records",
                 nlater || active_later ? "" : "s");
    if (!s->cfg.recover_truncate) {
        fprintf(stderr,
                "cfdb-server: %s is corrupt at offset %zu: the record there (length field %u) %s, %s. "
                "This is not a torn tail: acknowledged commits after it would be lost. Not starting; nothing "
                "was changed. To start anyway and discard everything logged from offset %zu on, run with "
                "--recover-truncate.\n",
                path, r->valid_len, r->bad_plen, rec_status_text(r->status), what, r->valid_len);
        return CFDB_ERR_FILE_CORRUPT;
    }
    char kept[SRV_WAL_MAX_PATH + 64];
    int rc = keep_discarded(path, r->valid_len, kept, sizeof kept);
    if (rc) {
        fprintf(stderr, "cfdb-server: cannot keep the discarded part of %s: %s\n", path, strerror(errno));
        return rc;
    }
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0 || ftruncate(fd, (off_t)r->valid_len) || fsync(fd)) {
        rc = srv_io_error();
        fprintf(stderr, "cfdb-server: cannot cut %s at offset %zu: %s\n", path, r->valid_len, strerror(errno));
        if (fd >= 0)
            close(fd);
        return rc;
    }
    close(fd);
    fprintf(stderr,
            "cfdb-server: --recover-truncate: %s cut at offset %zu (the record there %s, %s); the %zu discarded "
            "bytes are in %s\n",
            path, r->valid_len, rec_status_text(r->status), what, r->len - r->valid_len, kept);
    for (size_t i = 0; i < nlater + (active_later ? 1 : 0); i++) {
        char name[64], from[SRV_WAL_MAX_PATH], to[SRV_WAL_MAX_PATH + 16];
        if (i < nlater)
            snprintf(name, sizeof name, "wal.%" PRIu64, later[i]);
        else
            snprintf(name, sizeof name, "wal");
        srv_wal_path(w, name, from);
        snprintf(to, sizeof to, "%s.discarded", from);
        if (rename(from, to) && errno != ENOENT) {
            rc = srv_io_error();
            fprintf(stderr, "cfdb-server: cannot set %s aside: %s\n", from, strerror(errno));
            return rc;
        }
        fprintf(stderr, "cfdb-server: --recover-truncate: %s set aside as %s\n", from, to);
    }
    return srv_wal_fsync_dir(w->dir);
}

static int recover_logs(srv *s, int64_t sv, int64_t *newest, uint64_t *active_valid)
{
    srv_wal *w = s->wal;
    uint64_t *seqs = NULL;
    size_t nseq = 0;
    *active_valid = 0;
    int rc = list_frozen(w->dir, &seqs, &nseq);
    if (rc) {
        fprintf(stderr, "cfdb-server: cannot list %s: %s\n", w->dir, strerror(errno));
        return rc;
    }
    w->next_seq = nseq ? seqs[nseq - 1] + 1 : 1;
    bool stopped = false;
    for (size_t i = 0; i <= nseq && rc == 0 && !stopped; i++) {
        bool active = i == nseq;
        char name[32], path[SRV_WAL_MAX_PATH];
        if (active)
            snprintf(name, sizeof name, "wal");
        else
            snprintf(name, sizeof name, "wal.%" PRIu64, seqs[i]);
        srv_wal_path(w, name, path);
        replay_result r;
        rc = replay_file(s, path, sv, newest, &r);
        if (rc) {
            if (errno)
                fprintf(stderr, "cfdb-server: cannot read %s: %s\n", path, strerror(errno));
            break;
        }
        if (!active)
            w->frozen_bytes += r.valid_len;
        if (r.status == REC_OK) {
            if (active)
                *active_valid = r.len;
            continue;
        }
        /* a torn tail: the active log's last append, cut short or never completed
         * (a record that passes its checksum yet does not parse was written whole) */
        if (active && r.after_at == r.len && r.status != REC_UNPARSEABLE) {
            srv_log(s, "%s: cut %zu bytes of a torn last record at offset %zu (%s)", path, r.len - r.valid_len,
                    r.valid_len, rec_status_text(r.status));
            *active_valid = r.valid_len;
            continue;
        }
        rc = handle_corruption(s, path, &r, active ? NULL : seqs + i + 1, active ? 0 : nseq - i - 1, !active);
        stopped = true;
        *active_valid = active ? r.valid_len : 0;
    }
    free(seqs);
    return rc;
}

int srv_wal_open(srv *s, int64_t *recovered)
{
    *recovered = 0;
    if (mkdir(s->cfg.datadir, 0755) && errno != EEXIST) {
        int rc = srv_io_error();
        fprintf(stderr, "cfdb-server: cannot create %s: %s\n", s->cfg.datadir, strerror(errno));
        return rc;
    }
    srv_wal *w = calloc(1, sizeof(*w));
    if (!w)
        return CFDB_ERR_UNKNOWN_ERROR;
    w->fd = -1;
    w->dir = strdup(s->cfg.datadir);
    if (!w->dir) {
        free(w);
        return CFDB_ERR_UNKNOWN_ERROR;
    }
    s->wal = w;
    char path[SRV_WAL_MAX_PATH];
    /* a snapshot that was being written when the process stopped, and a probe */
    if (unlink(srv_wal_path(w, "snapshot.tmp", path)) == 0)
        srv_log(s, "removed %s left by an unfinished snapshot", path);
    unlink(srv_wal_path(w, "space.probe", path));
    int64_t sv = 0, newest = 0;
    uint64_t valid = 0;
    int rc = srv_snapshot_load(s, &sv);
    if (rc)
        goto fail;
    newest = sv;
    rc = recover_logs(s, sv, &newest, &valid);
    if (rc)
        goto fail;
    srv_wal_path(w, "wal", path);
    w->fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (w->fd < 0) {
        rc = srv_io_error();
        fprintf(stderr, "cfdb-server: cannot open %s: %s\n", path, strerror(errno));
        goto fail;
    }
    if (ftruncate(w->fd, (off_t)valid) || lseek(w->fd, (off_t)valid, SEEK_SET) < 0 || fsync(w->fd)) {
        rc = srv_io_error();
        fprintf(stderr, "cfdb-server: cannot prepare %s: %s\n", path, strerror(errno));
        goto fail;
    }
    srv_wal_fsync_dir(s->cfg.datadir);
    w->size = valid;
    w->snapshot_version = sv;
    *recovered = newest;
    return 0;
fail:
    if (w->fd >= 0)
        close(w->fd);
    free(w->dir);
    free(w);
    s->wal = NULL;
    return rc;
}

/* ---- periodic work and status ---- */

void srv_wal_maybe_snapshot(srv *s)
{
    if (!s->wal)
        return;
    if (s->wal->blocked)
        probe(s);
    srv_snapshot_tick(s);
}

void srv_wal_get_health(const srv *s, srv_wal_health *out)
{
    memset(out, 0, sizeof *out);
    const srv_wal *w = s->wal;
    if (!w)
        return;
    uint64_t now = now_ns();
    out->blocked = w->blocked;
    out->block_errno = w->block_errno;
    out->block_path = "wal";
    out->blocked_seconds = w->blocked ? (double)(now - w->blocked_since_ns) / 1e9 : 0;
    out->next_probe_seconds = w->blocked && w->next_probe_ns > now ? (double)(w->next_probe_ns - now) / 1e9 : 0;
    out->snapshot_failures = w->snap_failures;
    out->snapshot_errno = w->snap_errno;
    out->snapshot_step = w->snap_step;
    out->next_snapshot_seconds = w->next_snapshot_ns > now ? (double)(w->next_snapshot_ns - now) / 1e9 : 0;
    out->log_bytes = w->frozen_bytes + w->size;
    out->snapshot_version = w->snapshot_version;
    out->snapshot_keys = w->last_snapshot_keys;
    out->snapshot_running = srv_snapshot_progress(w, &out->snapshot_version, &out->snapshot_keys);
}

int64_t srv_wal_epoch_version(srv *s)
{
    char path[SRV_WAL_MAX_PATH], tmp[SRV_WAL_MAX_PATH];
    snprintf(path, sizeof path, "%s/epoch", s->cfg.datadir);
    snprintf(tmp, sizeof tmp, "%s/epoch.tmp", s->cfg.datadir);
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
        FILE *o = fopen(tmp, "w");
        if (o) {
            fprintf(o, "%lld\n", (long long)epoch);
            fflush(o);
            fsync(fileno(o));
            fclose(o);
            rename(tmp, path);
            srv_wal_fsync_dir(s->cfg.datadir);
        }
    }
    return now_us - epoch + 1000;
}

void srv_wal_close(srv *s)
{
    srv_wal *w = s->wal;
    if (!w)
        return;
    srv_snapshot_cancel(s);
    if (w->fd >= 0)
        close(w->fd);
    free(w->dir);
    free(w);
    s->wal = NULL;
}
