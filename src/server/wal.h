/* Durability for --datadir: a write-ahead log of committed mutations (fsync before a
 * commit is acknowledged) and snapshots of the store taken in the background.
 *
 * Files in the data directory:
 *   wal           the active log: records of u32 payload length, u64 XXH3(payload),
 *                 payload = i64 version, u32 count, (u8 type, u32 l1, p1, u32 l2, p2)*.
 *   wal.N         frozen logs (N = 1, 2, ...), same format: when a snapshot starts, the
 *                 active log is renamed to the next wal.N and a new empty "wal" is
 *                 created, so every record in a frozen log has a version <= the
 *                 snapshot's and every later record goes to the new "wal". Frozen logs
 *                 are deleted once a snapshot covering them is durable.
 *   snapshot      "CFDBSNP2": u64 magic, i64 version, (u32 klen, key, u32 vlen, value)*,
 *                 u64 count, u64 XXH3 of everything before it (an older "CFDBSNP1" file,
 *                 count before the rows, is still read). Written to snapshot.tmp by a
 *                 writer thread, fsynced, renamed, the directory fsynced.
 *   snapshot.tmp  a snapshot being written; removed when writing fails and at start.
 *   space.probe   written and removed to find out whether a full disk has room again.
 *
 * Recovery loads the snapshot, then replays the frozen logs in order and the active log,
 * applying records newer than the snapshot. A record that does not check out is
 *   - a torn tail when it is in the active log and no whole, valid record follows it
 *     (a crash cut the last append short: its bytes are cut off, nothing acknowledged
 *     is lost because the append's fsync never returned);
 *   - corruption otherwise (a frozen log is always whole; a valid record after a bad
 *     one means bytes changed under an acknowledged record): the server refuses to
 *     start, naming the file and offset, and changes nothing, unless started with
 *     recover_truncate, which keeps the bad bytes and every later log as *.discarded*
 *     files and carries on with the records before the corruption.
 *
 * Failures while running: a log append that fails (ENOSPC, EIO) answers its batch
 * commit_unknown_result, cuts the partial record off and blocks the log: commits then
 * wait in the commit proxy while a probe (space.probe) retries with exponential
 * back-off, and the log unblocks by itself once the probe succeeds. A snapshot that
 * fails is removed and retried with exponential back-off. Both are reported in status. */
#ifndef CFDB_SERVER_WAL_H
#define CFDB_SERVER_WAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mutation.h"

struct cfdb_server;
typedef struct srv_wal srv_wal;
typedef struct srv_snapshot_job srv_snapshot_job;

/* Opens (creating) the directory and recovers into the server's store.
 * *recovered = newest recovered version (0 when empty). 0, or a FoundationDB code after
 * printing why (1522 file_corrupt for a corrupt log without --recover-truncate). */
int srv_wal_open(struct cfdb_server *s, int64_t *recovered);
/* Appends one commit version's mutations and fsyncs. 0, or a FoundationDB code (the log is
 * then blocked; 1510 io_error while it stays blocked). */
int srv_wal_append(struct cfdb_server *s, int64_t version, const cfdb_mutation *m, size_t n);
/* Whether appends are refused until the disk takes writes again (commits wait). */
bool srv_wal_blocked(const struct cfdb_server *s);
/* Periodic work (the server's maintenance tick): probes a blocked log, starts a
 * background snapshot when the log has grown enough and no back-off is pending. */
void srv_wal_maybe_snapshot(struct cfdb_server *s);
/* Writes a snapshot now, waiting for it (finishes one running in the background first).
 * 0 or a FoundationDB code. */
int srv_wal_snapshot(struct cfdb_server *s);
/* Starts a background snapshot unless one is running. 0, or a FoundationDB code when it
 * cannot start. */
int srv_wal_snapshot_start(struct cfdb_server *s);
/* Test hook: while held, a background snapshot stops between chunks. */
void srv_wal_snapshot_hold(struct cfdb_server *s, bool hold);
void srv_wal_close(struct cfdb_server *s);
/* Microseconds of wall-clock time since the data directory was first used (the file
 * "epoch" records that moment), or 0. */
int64_t srv_wal_epoch_version(struct cfdb_server *s);

/* What status json reports. Strings point into the log's state (valid until the next
 * log call). */
typedef struct srv_wal_health {
    bool blocked;              /* appends refused: commits wait */
    int block_errno;
    const char *block_path;
    double blocked_seconds;
    double next_probe_seconds;
    unsigned snapshot_failures; /* in a row */
    int snapshot_errno;
    const char *snapshot_step;  /* what failed: "write", "fsync", "rename", ... */
    double next_snapshot_seconds;
    bool snapshot_running;
    int64_t snapshot_version;   /* of the running one, else of the last written */
    uint64_t snapshot_keys;     /* rows written so far / in the last one */
    uint64_t log_bytes;         /* in every log file since the last snapshot */
} srv_wal_health;
void srv_wal_get_health(const struct cfdb_server *s, srv_wal_health *out);

/* ---- shared by wal.c and snapshot.c ---- */

#define SRV_WAL_MAX_PATH 4096

struct srv_wal {
    char *dir;
    int fd;               /* the active log, opened for appending */
    uint64_t size;        /* of the active log */
    uint64_t frozen_bytes; /* in frozen logs */
    uint64_t next_seq;     /* the name the active log gets when frozen */
    int64_t snapshot_version;
    /* blocked appends */
    bool blocked, dirty;   /* dirty: a partial record could not be cut off */
    bool dir_unsynced;     /* a rotation's renames wait for a directory fsync */
    int block_errno;
    uint64_t blocked_since_ns, next_probe_ns, probe_backoff_ns;
    /* snapshots */
    srv_snapshot_job *job;
    bool hold;
    /* told when a background snapshot ends: rc 0 (written at version) or its code (the
     * control port answers its waiting `snapshot` commands from here) */
    void (*on_snapshot_end)(struct cfdb_server *s, int rc, int64_t version);
    unsigned snap_failures;
    int snap_errno;
    const char *snap_step;
    uint64_t next_snapshot_ns, snap_backoff_ns;
    uint64_t last_snapshot_keys;
    char path_buf[SRV_WAL_MAX_PATH];
};

/* "dir/name" in w->path_buf (or out when given). */
const char *srv_wal_path(srv_wal *w, const char *name, char *out);
/* Error convention of the log and snapshot files: 0, or a positive FoundationDB code
 * (error_codes.h). A failed system call leaves errno set for the caller's message and
 * returns srv_io_error() (its errno through cfdb_error_from_errno: 1510 io_error for EIO,
 * ENOSPC, ...); out of memory is 4000 unknown_error. */
int srv_io_error(void);
/* Writes all n bytes (retrying short writes and EINTR). 0 or a FoundationDB code. */
int srv_wal_write_all(int fd, const void *buf, size_t n);
/* fsyncs a directory. 0 or a FoundationDB code (errno kept). */
int srv_wal_fsync_dir(const char *dir);
/* Freezes the active log (renamed to wal.N, a new empty one created). 0 or a FoundationDB
 * code (errno kept). */
int srv_wal_rotate(struct cfdb_server *s);
/* Deletes the frozen logs wal.N with N < below from dir and fsyncs it (a snapshot now
 * covers them). Touches no server state: the snapshot writer thread calls it. 0 or a
 * FoundationDB code. */
int srv_wal_drop_frozen(const char *dir, uint64_t below);
/* snapshot.c */
int srv_snapshot_load(struct cfdb_server *s, int64_t *version);
void srv_snapshot_cancel(struct cfdb_server *s);
void srv_snapshot_tick(struct cfdb_server *s);
/* Whether a snapshot is running; if so its version and the rows written so far. */
bool srv_snapshot_progress(const srv_wal *w, int64_t *version, uint64_t *keys);

#endif
