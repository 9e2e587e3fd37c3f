/* Snapshots of the store (file format in wal.h), written without stopping the world:
 *
 * - Start: the active log is frozen (wal -> wal.N), the snapshot's version v is the
 *   store's latest, and the store keeps v readable (cfdb_mvcc_set_floor).
 * - Rows: on the event loop, in steps of about 0.25 ms one millisecond apart, the rows
 *   visible at v are copied into 1 MB chunks; each step seeks again after the last key
 *   it copied, so commits and reads run between steps and never see a half-taken store.
 * - Files: a writer thread takes the chunks from a queue and writes snapshot.tmp, then
 *   fsyncs, renames it to snapshot and fsyncs the directory; the loop polls its result.
 *   It runs at SCHED_IDLE: requests on the loop thread come first.
 *   The scan waits while 32 MB are queued (memory stays bounded on a slow disk) and stops
 *   as soon as a write fails (a full disk costs what fits, not the whole store).
 * - End: on success the writer also deletes the frozen logs (the loop thread does no
 *   file work but the rotation's renames); on failure snapshot.tmp is removed and
 *   the next attempt waits 1 s, 2 s, 4 s ... up to 60 s (reported in status).
 * The writer thread shares only the queue (mutex and condition variable) and its final
 * result (read after pthread_join). */
#define _GNU_SOURCE /* SCHED_IDLE */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include "error_codes.h"
#include "srv_core.h"
#include "wal.h"

#define SNAP_MAGIC_V1 UINT64_C(0x31504E5342444643) /* "CFDBSNP1" */
#define SNAP_MAGIC_V2 UINT64_C(0x32504E5342444643) /* "CFDBSNP2" */
#define SNAPSHOT_AFTER_BYTES (64u << 20)
#define CHUNK_BYTES (1u << 20)
#define MAX_QUEUED_BYTES (32u << 20) /* the scan waits while the writer has this much to write */
#define STEP_NS 250000ull            /* rows copied per loop turn: about 0.25 ms ... */
#define STEP_GAP_NS 1000000ull       /* ... then 1 ms for everything else */
#define POLL_NS 2000000ull           /* waiting for the writer thread */
#define HOLD_NS 10000000ull          /* held (test hook) */
#define BACKOFF_FIRST_NS 1000000000ull
#define BACKOFF_MAX_NS 60000000000ull

typedef struct chunk {
    struct chunk *next;
    size_t len, cap;
    uint8_t data[];
} chunk;

struct srv_snapshot_job {
    srv *s;
    int64_t version;
    uint64_t drop_below; /* frozen logs the snapshot covers: wal.N, N < drop_below */
    cfdb_timer timer;
    /* loop thread: the scan */
    uint8_t *last_key;
    size_t last_len, last_cap;
    bool scanning_started, scan_done;
    int scan_err; /* the scan failed (out of memory): the writer was told to stop */
    uint64_t count;
    XXH3_state_t *hash;
    chunk *cur;
    /* shared with the writer thread */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    chunk *head, *tail;
    size_t queued; /* bytes in chunks handed to the writer and not yet written */
    bool no_more, abort;
    bool finished; /* the writer is done; result below */
    bool write_failed; /* the writer hit an error: the scan stops early */
    /* the writer's own, read after join */
    pthread_t thread;
    int fd;
    int err;
    const char *step;
    char tmp[SRV_WAL_MAX_PATH], fin[SRV_WAL_MAX_PATH], dir[SRV_WAL_MAX_PATH];
};

/* ---- loading ---- */

int srv_snapshot_load(srv *s, int64_t *version)
{
    char path[SRV_WAL_MAX_PATH];
    srv_wal_path(s->wal, "snapshot", path);
    *version = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT)
            return 0;
        int rc = srv_io_error();
        fprintf(stderr, "cfdb-server: cannot open %s: %s\n", path, strerror(errno));
        return rc;
    }
    struct stat st;
    uint8_t *p = NULL;
    size_t len = 0;
    if (fstat(fd, &st) == 0) {
        len = (size_t)st.st_size;
        p = malloc(len ? len : 1);
        size_t got = 0;
        while (p && got < len) {
            ssize_t r = read(fd, p + got, len - got);
            if (r < 0 && errno == EINTR)
                continue;
            if (r <= 0)
                break;
            got += (size_t)r;
        }
        len = got;
    }
    close(fd);
    /* where it is wrong: the first byte that does not check out (the whole-file checksum
     * covers everything before its own 8 bytes, so a mismatch is reported at the checksum,
     * with how far the rows parse) */
    const char *why = "it is too short for a snapshot's header and checksum";
    size_t bad_at = len;
    int rc = CFDB_ERR_FILE_CORRUPT;
    cfdb_mvcc_store *store = s->store;
    cfdb_mutation *m = NULL;
    bool sum_ok = false;
    if (!p) {
        why = "it cannot be read";
        rc = CFDB_ERR_IO_ERROR;
        goto out;
    }
    if (len < 32)
        goto out;
    uint64_t h, magic, count;
    memcpy(&h, p + len - 8, 8);
    sum_ok = XXH3_64bits(p, len - 8) == h;
    memcpy(&magic, p, 8);
    memcpy(version, p + 8, 8);
    size_t off, end;
    if (magic == SNAP_MAGIC_V1) {
        memcpy(&count, p + 16, 8);
        off = 24;
        end = len - 8;
    } else if (magic == SNAP_MAGIC_V2) {
        memcpy(&count, p + len - 16, 8);
        off = 16;
        end = len - 16;
    } else {
        why = "it does not start with a snapshot's magic number";
        bad_at = 0;
        goto out;
    }
    why = "its rows do not parse";
    if (count > (end - off) / 8) {
        bad_at = magic == SNAP_MAGIC_V1 ? 16 : len - 16; /* the row count */
        why = "its row count is larger than the file";
        goto out;
    }
    m = malloc(sizeof(*m) * (count ? count : 1));
    if (!m) {
        why = "out of memory";
        rc = CFDB_ERR_UNKNOWN_ERROR;
        goto out;
    }
    uint64_t i;
    size_t row_at = off;
    for (i = 0; i < count; i++) {
        uint32_t kl, vl;
        row_at = off;
        if (end - off < 4)
            break;
        memcpy(&kl, p + off, 4);
        off += 4;
        if (end - off < (size_t)kl + 4)
            break;
        m[i].type = CFDB_MUT_SET_VALUE;
        m[i].param1 = cfdb_bytes_make(p + off, kl);
        off += kl;
        memcpy(&vl, p + off, 4);
        off += 4;
        if (end - off < vl)
            break;
        m[i].param2 = cfdb_bytes_make(p + off, vl);
        off += vl;
    }
    if (i != count || off != end) {
        bad_at = i != count ? row_at : off;
        goto out;
    }
    if (*version <= 0) {
        why = "its version is not positive";
        bad_at = 8;
        goto out;
    }
    if (!sum_ok) {
        why = "its checksum does not match (every row parses)";
        bad_at = len - 8;
        goto out;
    }
    rc = cfdb_mvcc_apply(store, *version, m, count);
    if (rc)
        why = "its rows cannot be applied";
out:
    free(m);
    free(p);
    if (rc == CFDB_ERR_FILE_CORRUPT) {
        /* --recover-truncate cuts a log's tail; a snapshot is the base every later log
         * builds on, and the logs it replaced are deleted: cutting it would silently drop
         * keys from anywhere in the key space, so it is refused with or without the flag */
        fprintf(stderr,
                "cfdb-server: snapshot %s is corrupt at offset %zu of %zu: %s%s. Not starting; nothing was "
                "changed.%s The logs it replaced are gone, so restore the data directory from a copy, or move "
                "it away to start empty.\n",
                path, bad_at, len, why,
                sum_ok || bad_at == len - 8 ? "" : " (and the file checksum does not match)",
                s->cfg.recover_truncate ? " --recover-truncate applies only to a log's torn or corrupt tail, not "
                                          "to a snapshot."
                                        : "");
    } else if (rc) {
        fprintf(stderr, "cfdb-server: snapshot %s cannot be loaded: %s (%s). Not starting; nothing was changed.\n",
                path, why, cfdb_error_name(rc));
    }
    return rc;
}

/* ---- the writer thread ---- */

static void *writer_main(void *arg)
{
    srv_snapshot_job *j = arg;
    /* the loop thread serves requests: the writer only uses what CPU is left over
     * (failing to change the policy changes nothing else) */
    struct sched_param sp = { 0 };
    pthread_setschedparam(pthread_self(), SCHED_IDLE, &sp);
    bool failed = false, aborted = false;
    for (;;) {
        pthread_mutex_lock(&j->mu);
        while (!j->head && !j->no_more && !j->abort)
            pthread_cond_wait(&j->cv, &j->mu);
        chunk *list = j->head;
        j->head = j->tail = NULL;
        bool last = j->no_more || j->abort;
        aborted = j->abort;
        pthread_mutex_unlock(&j->mu);
        while (list) {
            chunk *next = list->next;
            if (!failed && !aborted && srv_wal_write_all(j->fd, list->data, list->len)) {
                failed = true;
                j->err = errno;
                j->step = "write";
                pthread_mutex_lock(&j->mu);
                j->write_failed = true;
                pthread_mutex_unlock(&j->mu);
            }
            pthread_mutex_lock(&j->mu);
            j->queued -= list->len;
            pthread_mutex_unlock(&j->mu);
            free(list);
            list = next;
        }
        if (last)
            break;
    }
    if (aborted && !failed) {
        failed = true;
        j->err = ECANCELED;
        j->step = "stop";
    }
    if (!failed && fsync(j->fd)) {
        failed = true;
        j->err = errno;
        j->step = "fsync";
    }
    if (close(j->fd) && !failed) {
        failed = true;
        j->err = errno;
        j->step = "close";
    }
    j->fd = -1;
    if (!failed && rename(j->tmp, j->fin)) {
        failed = true;
        j->err = errno;
        j->step = "rename";
    }
    if (!failed && srv_wal_fsync_dir(j->dir)) {
        failed = true;
        j->err = errno;
        j->step = "fsync of the directory";
    }
    /* the logs it covers; one that stays (an error here) is replayed and skipped later */
    if (!failed)
        srv_wal_drop_frozen(j->dir, j->drop_below);
    if (failed)
        unlink(j->tmp);
    pthread_mutex_lock(&j->mu);
    j->finished = true;
    pthread_mutex_unlock(&j->mu);
    return NULL;
}

/* ---- the scan (loop thread) ---- */

static void push_chunk(srv_snapshot_job *j)
{
    chunk *c = j->cur;
    j->cur = NULL;
    if (!c)
        return;
    pthread_mutex_lock(&j->mu);
    if (j->tail)
        j->tail->next = c;
    else
        j->head = c;
    j->tail = c;
    j->queued += c->len;
    pthread_cond_signal(&j->cv);
    pthread_mutex_unlock(&j->mu);
}

/* Appends n bytes to the current chunk (a new one when full), hashed unless it is the
 * checksum itself. */
static int put_ex(srv_snapshot_job *j, const void *d, size_t n, bool hashed)
{
    if (j->cur && j->cur->cap - j->cur->len < n)
        push_chunk(j);
    if (!j->cur) {
        size_t cap = n > CHUNK_BYTES ? n : CHUNK_BYTES;
        j->cur = malloc(sizeof(chunk) + cap);
        if (!j->cur)
            return CFDB_ERR_UNKNOWN_ERROR;
        j->cur->next = NULL;
        j->cur->len = 0;
        j->cur->cap = cap;
    }
    memcpy(j->cur->data + j->cur->len, d, n);
    j->cur->len += n;
    if (hashed)
        XXH3_64bits_update(j->hash, d, n);
    return 0;
}

static int put(srv_snapshot_job *j, const void *d, size_t n)
{
    return put_ex(j, d, n, true);
}

static int put_row(srv_snapshot_job *j, cfdb_bytes k, cfdb_bytes v)
{
    uint32_t kl = k.len, vl = v.len;
    size_t n = 8 + (size_t)kl + vl;
    uint8_t small[512];
    uint8_t *row = n <= sizeof small ? small : malloc(n);
    if (!row)
        return CFDB_ERR_UNKNOWN_ERROR;
    memcpy(row, &kl, 4);
    if (kl)
        memcpy(row + 4, k.ptr, kl);
    memcpy(row + 4 + kl, &vl, 4);
    if (vl)
        memcpy(row + 8 + kl, v.ptr, vl);
    int rc = put(j, row, n);
    if (row != small)
        free(row);
    return rc;
}

/* Copies rows for about budget_ns (0: all of them). 0, or 4000 unknown_error (out of memory). */
static int scan_step(srv_snapshot_job *j, uint64_t budget_ns)
{
    srv *s = j->s;
    uint64_t t0 = cfdb_monotonic_ns();
    cfdb_mvcc_iter it;
    if (!j->scanning_started) {
        cfdb_mvcc_iter_seek_ge(&it, s->store, j->version, (cfdb_bytes){ 0, 0 });
        j->scanning_started = true;
    } else {
        cfdb_mvcc_iter_seek_gt(&it, s->store, j->version, cfdb_bytes_make(j->last_key, j->last_len));
    }
    unsigned n = 0;
    for (; cfdb_mvcc_iter_valid(&it); cfdb_mvcc_iter_next(&it)) {
        int rc = put_row(j, it.key, it.value);
        if (rc)
            return rc;
        j->count++;
        if (budget_ns && ++n % 256 == 0 && cfdb_monotonic_ns() - t0 >= budget_ns)
            break;
    }
    if (!cfdb_mvcc_iter_valid(&it)) {
        uint64_t h = 0;
        int rc = put(j, &j->count, 8);
        if (rc == 0) {
            h = XXH3_64bits_digest(j->hash);
            rc = put_ex(j, &h, 8, false);
        }
        if (rc)
            return rc;
        push_chunk(j);
        pthread_mutex_lock(&j->mu);
        j->no_more = true;
        pthread_cond_signal(&j->cv);
        pthread_mutex_unlock(&j->mu);
        j->scan_done = true;
        return 0;
    }
    /* resume after this key next time */
    if (it.key.len > j->last_cap) {
        uint8_t *np = realloc(j->last_key, it.key.len);
        if (!np)
            return CFDB_ERR_UNKNOWN_ERROR;
        j->last_key = np;
        j->last_cap = it.key.len;
    }
    if (it.key.len)
        memcpy(j->last_key, it.key.ptr, it.key.len);
    j->last_len = it.key.len;
    return 0;
}

static void stop_scan(srv_snapshot_job *j, bool abort)
{
    pthread_mutex_lock(&j->mu);
    if (abort)
        j->abort = true;
    j->no_more = true;
    pthread_cond_signal(&j->cv);
    pthread_mutex_unlock(&j->mu);
    j->scan_done = true;
}

static bool writer_finished(srv_snapshot_job *j, bool *write_failed, size_t *queued)
{
    pthread_mutex_lock(&j->mu);
    bool f = j->finished;
    if (write_failed)
        *write_failed = j->write_failed;
    if (queued)
        *queued = j->queued;
    pthread_mutex_unlock(&j->mu);
    return f;
}

static void failed_attempt(srv *s, int err, const char *step)
{
    srv_wal *w = s->wal;
    w->snap_failures++;
    w->snap_errno = err;
    w->snap_step = step;
    w->snap_backoff_ns = w->snap_backoff_ns ? w->snap_backoff_ns * 2 : BACKOFF_FIRST_NS;
    if (w->snap_backoff_ns > BACKOFF_MAX_NS)
        w->snap_backoff_ns = BACKOFF_MAX_NS;
    w->next_snapshot_ns = cfdb_monotonic_ns() + w->snap_backoff_ns;
    srv_log(s, "snapshot failed (%s: %s), attempt %u; next attempt in %.0f s", step, strerror(err),
            w->snap_failures, (double)w->snap_backoff_ns / 1e9);
}

/* Joins the writer (which must have finished or be told to) and frees the job. 0, or the
 * attempt's FoundationDB code: 4000 unknown_error when copying rows ran out of memory,
 * 1101 operation_cancelled when it was stopped, else the writer's errno mapped. */
static int finish(srv *s)
{
    srv_wal *w = s->wal;
    srv_snapshot_job *j = w->job;
    pthread_join(j->thread, NULL);
    cfdb_loop_timer_cancel(s->loop, &j->timer);
    cfdb_mvcc_set_floor(s->store, 0);
    int rc = 0;
    if (j->scan_err)
        rc = CFDB_ERR_UNKNOWN_ERROR; /* scan_err is only ever ENOMEM */
    else if (j->step)
        rc = j->err == ECANCELED ? CFDB_ERR_OPERATION_CANCELLED
             : j->err           ? cfdb_error_from_errno(j->err)
                                : CFDB_ERR_IO_ERROR;
    if (rc) {
        failed_attempt(s, j->scan_err ? j->scan_err : j->err, j->scan_err ? "copying rows" : j->step);
    } else {
        w->snapshot_version = j->version;
        w->last_snapshot_keys = j->count;
        w->snap_failures = 0;
        w->snap_errno = 0;
        w->snap_step = NULL;
        w->snap_backoff_ns = 0;
        w->next_snapshot_ns = 0;
        w->frozen_bytes = 0; /* the writer dropped them */
        srv_log(s, "snapshot at version %" PRId64 " written (%" PRIu64 " keys)", j->version, j->count);
    }
    chunk *c = j->cur;
    while (c) { /* unsent (aborted scan) */
        chunk *n = c->next;
        free(c);
        c = n;
    }
    for (c = j->head; c;) {
        chunk *n = c->next;
        free(c);
        c = n;
    }
    pthread_mutex_destroy(&j->mu);
    pthread_cond_destroy(&j->cv);
    XXH3_freeState(j->hash);
    free(j->last_key);
    int64_t version = j->version;
    free(j);
    w->job = NULL;
    if (w->on_snapshot_end)
        w->on_snapshot_end(s, rc, version);
    return rc;
}

static void job_timer(cfdb_loop *loop, cfdb_timer *t, void *arg)
{
    srv *s = arg;
    srv_snapshot_job *j = s->wal->job;
    (void)t;
    if (!j)
        return;
    bool write_failed = false;
    size_t queued = 0;
    writer_finished(j, &write_failed, &queued);
    if (!j->scan_done && write_failed) /* no use copying the rest (a full disk) */
        stop_scan(j, false);
    if (!j->scan_done) {
        if (s->wal->hold || queued >= MAX_QUEUED_BYTES) {
            cfdb_loop_timer_add_in(loop, &j->timer, s->wal->hold ? HOLD_NS : POLL_NS);
            return;
        }
        if (scan_step(j, STEP_NS)) {
            j->scan_err = ENOMEM;
            stop_scan(j, true);
        }
        cfdb_loop_timer_add_in(loop, &j->timer, j->scan_done ? POLL_NS : STEP_GAP_NS);
        return;
    }
    if (writer_finished(j, NULL, NULL))
        finish(s);
    else
        cfdb_loop_timer_add_in(loop, &j->timer, POLL_NS);
}

int srv_wal_snapshot_start(srv *s)
{
    srv_wal *w = s->wal;
    if (w->job)
        return 0;
    srv_snapshot_job *j = calloc(1, sizeof *j);
    if (!j) {
        failed_attempt(s, ENOMEM, "start");
        return CFDB_ERR_UNKNOWN_ERROR;
    }
    j->s = s;
    j->fd = -1;
    srv_wal_path(w, "snapshot.tmp", j->tmp);
    srv_wal_path(w, "snapshot", j->fin);
    snprintf(j->dir, sizeof j->dir, "%s", w->dir);
    int rc = srv_wal_rotate(s);
    if (rc) {
        failed_attempt(s, errno, "freezing the log");
        free(j);
        return rc;
    }
    j->fd = open(j->tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (j->fd < 0) {
        rc = srv_io_error();
        failed_attempt(s, errno, "create");
        free(j);
        return rc;
    }
    j->version = cfdb_mvcc_latest_version(s->store);
    j->drop_below = w->next_seq;
    j->hash = XXH3_createState();
    uint64_t magic = SNAP_MAGIC_V2;
    if (!j->hash || XXH3_64bits_reset(j->hash) != XXH_OK || put(j, &magic, 8) || put(j, &j->version, 8)) {
        close(j->fd);
        unlink(j->tmp);
        XXH3_freeState(j->hash);
        free(j->cur);
        free(j);
        failed_attempt(s, ENOMEM, "start");
        return CFDB_ERR_UNKNOWN_ERROR;
    }
    pthread_mutex_init(&j->mu, NULL);
    pthread_cond_init(&j->cv, NULL);
    int err = pthread_create(&j->thread, NULL, writer_main, j);
    if (err) {
        close(j->fd);
        unlink(j->tmp);
        pthread_mutex_destroy(&j->mu);
        pthread_cond_destroy(&j->cv);
        XXH3_freeState(j->hash);
        free(j->cur);
        free(j);
        failed_attempt(s, err, "start");
        return cfdb_error_from_errno(err);
    }
    cfdb_mvcc_set_floor(s->store, j->version);
    cfdb_timer_init(&j->timer, job_timer, s);
    w->job = j;
    cfdb_loop_timer_add_in(s->loop, &j->timer, 0);
    srv_log(s, "snapshot at version %" PRId64 " started", j->version);
    return 0;
}

int srv_wal_snapshot(srv *s)
{
    srv_wal *w = s->wal;
    if (!w->job) {
        int rc = srv_wal_snapshot_start(s);
        if (rc)
            return rc;
    }
    srv_snapshot_job *j = w->job;
    if (!j->scan_done && scan_step(j, 0)) {
        j->scan_err = ENOMEM;
        stop_scan(j, true);
    }
    return finish(s);
}

void srv_wal_snapshot_hold(srv *s, bool hold)
{
    s->wal->hold = hold;
}

void srv_snapshot_cancel(srv *s)
{
    srv_snapshot_job *j = s->wal->job;
    if (!j)
        return;
    stop_scan(j, true);
    finish(s);
}

void srv_snapshot_tick(srv *s)
{
    srv_wal *w = s->wal;
    if (w->job || w->frozen_bytes + w->size < SNAPSHOT_AFTER_BYTES || cfdb_monotonic_ns() < w->next_snapshot_ns)
        return;
    srv_wal_snapshot_start(s);
}

bool srv_snapshot_progress(const srv_wal *w, int64_t *version, uint64_t *keys)
{
    if (!w->job)
        return false;
    *version = w->job->version;
    *keys = w->job->count;
    return true;
}
