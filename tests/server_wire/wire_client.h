/* A minimal FoundationDB wire client for driving cfdb-server in tests: one or more
 * connections on the test's event loop, requests by hand, replies matched by token. */
#ifndef CFDB_TESTS_WIRE_CLIENT_H
#define CFDB_TESTS_WIRE_CLIENT_H

#include <stdbool.h>
#include <stdint.h>

#include "connection.h"
#include "event_loop.h"
#include "messages.h"

typedef struct wc_frame {
    cfdb_uid token;
    uint8_t *msg;
    uint32_t len;
} wc_frame;

typedef struct wc {
    cfdb_loop *loop;
    cfdb_conn *conn;
    bool open, closed;
    int close_error;
    wc_frame *frames;
    size_t nframes, cap;
    uint64_t rng;
    /* discovery results */
    cfdb_uid client_info_id;
    cfdb_uid grv, commit;
    uint16_t grv_port, commit_port;
} wc;

/* Connects to 127.0.0.1:port and waits for the ConnectPacket exchange. 0 or -1. */
int wc_connect(wc *w, cfdb_loop *loop, uint16_t port);
void wc_close(wc *w);
cfdb_uid wc_reply_token(wc *w);

/* Sends req (message m) to dest; *reply_slot (the request's reply token member) is
 * filled with a fresh token, returned. */
cfdb_uid wc_send(wc *w, cfdb_uid dest, const fb_message *m, const void *req, cfdb_uid *reply_slot);
/* Waits up to timeout for a frame to token; decodes it as reply message rm into out
 * (arena a). Returns 0, 1 on timeout, or -1 on decode failure / closed connection. */
int wc_wait(wc *w, cfdb_uid token, const fb_message *rm, void *out, cfdb_reply_error *err, cfdb_arena *a,
            uint64_t timeout_ns);
/* Whether a frame for token has arrived (without consuming it). */
bool wc_has(wc *w, cfdb_uid token);
int wc_call(wc *w, cfdb_uid dest, const fb_message *m, const void *req, cfdb_uid *reply_slot, const fb_message *rm,
            void *out, cfdb_reply_error *err, cfdb_arena *a);
void wc_pump(wc *w, uint64_t ns);

/* High level. */
int wc_open_database(wc *w, const char *cluster_key, cfdb_client_db_info *info, cfdb_arena *a);
int64_t wc_grv(wc *w);
/* Storage server getValue base token (and its port) owning key. */
int wc_locate(wc *w, cfdb_bytes key, cfdb_uid *ss, uint16_t *port, cfdb_key_range *shard, cfdb_arena *a);
/* Returns the in-band error (0 ok); *present / *value. */
int wc_get(wc *w, cfdb_uid ss, cfdb_bytes key, int64_t version, bool *present, cfdb_bytes *value, cfdb_arena *a);
int wc_get_range(wc *w, cfdb_uid ss, cfdb_key_selector b, cfdb_key_selector e, int64_t version, int limit,
                 int limit_bytes, cfdb_get_key_values_reply *out, cfdb_arena *a);

typedef struct wc_txn {
    cfdb_key_range reads[64];
    int nreads;
    cfdb_key_range writes[64];
    int nwrites;
    cfdb_mutation muts[64];
    int nmuts;
    int64_t read_snapshot;
    bool report_conflicting_keys;
} wc_txn;

void wc_txn_set(wc_txn *t, cfdb_arena *a, const char *k, const char *v);
void wc_txn_atomic(wc_txn *t, cfdb_arena *a, int type, cfdb_bytes k, cfdb_bytes operand);
void wc_txn_read(wc_txn *t, cfdb_arena *a, const char *k);
/* Commits; returns the error code (0 ok) with the CommitID in *id. */
int wc_commit(wc *w, const wc_txn *t, cfdb_commit_id *id, cfdb_arena *a);
cfdb_uid wc_commit_send(wc *w, const wc_txn *t);

cfdb_bytes wc_key_after(cfdb_arena *a, cfdb_bytes k);

#endif
