/* Durability for --datadir: a write-ahead log of committed mutations (fsync before a
 * commit is acknowledged) and periodic snapshots of the latest data.
 *
 * Files in the data directory:
 *   snapshot      u64 magic, i64 version, u64 count, (u32 klen, key, u32 vlen, value)*,
 *                 u64 XXH3 of everything before it. Written to snapshot.tmp, fsynced, renamed.
 *   wal           records: u32 payload length, u64 XXH3(payload), payload =
 *                 i64 version, u32 count, (u8 type, u32 l1, p1, u32 l2, p2)*.
 * Recovery loads the snapshot, then replays WAL records with a newer version, stopping
 * at the first torn or corrupt record (and cutting the file there). */
#ifndef CFDB_SERVER_WAL_H
#define CFDB_SERVER_WAL_H

#include <stddef.h>
#include <stdint.h>

#include "cfdb/mutation.h"

struct cfdb_server;

/* Opens (creating) the directory and recovers into the server's store.
 * *recovered = newest recovered version (0 when empty). Returns 0 or -1. */
int srv_wal_open(struct cfdb_server *s, int64_t *recovered);
/* Appends one commit version's mutations and fsyncs. Returns 0 or -1. */
int srv_wal_append(struct cfdb_server *s, int64_t version, const cfdb_mutation *m, size_t n);
/* Writes a snapshot and truncates the log when the log has grown enough. */
void srv_wal_maybe_snapshot(struct cfdb_server *s);
int srv_wal_snapshot(struct cfdb_server *s);
void srv_wal_close(struct cfdb_server *s);
/* Microseconds of wall-clock time since the data directory was first used (the file
 * "epoch" records that moment), or 0. */
int64_t srv_wal_epoch_version(struct cfdb_server *s);

#endif
