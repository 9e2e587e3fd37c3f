/* Mapped range reads (fdb_transaction_get_mapped_range): the state of one read and the
 * helpers its two files share. txn_mapped.c runs the read (the native layer: selectors to
 * the storage servers shard by shard, the exact-range fallback, selector resolution);
 * txn_mapped_rows.c holds what is about rows rather than requests: limits, the rows in
 * libfdb_c's MappedKeyValueRef layout, and the read-your-writes layer's conflict ranges and
 * get_mapped_range_reads_your_writes check. Functions returning int give 0 or a
 * FoundationDB error code. */
#ifndef CFDB_CLIENT_TXN_MAPPED_H
#define CFDB_CLIENT_TXN_MAPPED_H

#include "txn_internal.h"

#define ROW_UNLIMITED (-1)
#define BYTE_UNLIMITED (-1)

typedef struct mlimits {
    int rows, min_rows, bytes;
} mlimits;

typedef struct mstate {
    cfdb_key_selector rbegin, rend; /* after orEqual removal: conflict ranges use these */
    cfdb_key_selector begin, end;   /* the native read's current selectors */
    cfdb_key_selector nbegin, nend; /* the native read's original selectors (fallback) */
    cfdb_bytes mapper;
    bool reverse;
    mlimits olim, lim;
    int phase;
    /* the shard of the current request */
    cfdb_bytes shard_begin, shard_end;
    bool modified;
    bool loc_backward;
    cfdb_bytes loc_key;
    /* selector resolution (GetKey) */
    cfdb_key_selector gk;
    void (*gk_done)(op *o, cfdb_bytes key);
    /* exact-range read over [xb, xe) */
    cfdb_bytes xb, xe, fb, fe;
    cfdb_bytes rb, re; /* this request's keys */
    /* result */
    cfdb_fdb_mkv *rows;
    int n, cap;
    bool more, read_to_begin, read_through_end;
} mstate;

enum { PH_RANGE = 1, PH_EXACT = 2 };

/* The operation: its state in its future's block. */
typedef struct mapped_op {
    op base;
    mstate m;
} mapped_op;

#define MS(o) (&TXN_OP_AS(mapped_op, o)->m)

/* ---- txn_mapped_rows.c ---- */

/* k + "\x00" in a. */
int mapped_key_after(cfdb_arena *a, cfdb_bytes k, cfdb_bytes *out);
bool mapped_limits_valid(const mlimits *l);
bool mapped_limits_reached(const mlimits *l);
bool mapped_limits_min_rows_done(const mlimits *l);
/* The request's (limit, limitBytes) from the limits left (NativeAPI transformRangeLimits). */
void mapped_request_limits(const mlimits *l, bool reverse, int32_t *limit, int32_t *bytes);
/* Rows counted against the limits: only the primary key and value, plus 8 bytes a row. */
void mapped_limits_decrement(mlimits *l, const cfdb_mapped_key_value *rows, uint32_t n);
/* fdb_c's parameter mapping for range reads (limit, target_bytes, mode, iteration). */
int mapped_api_limits(int limit, int target_bytes, int mode, int iteration, mlimits *out);
/* The primary key of row i of the result so far. */
cfdb_bytes mapped_row_key(const mstate *m, int i);
/* NativeAPI's byte count for a mapped reply (the transaction's cost). */
uint64_t mapped_weight(const cfdb_mapped_key_value *rows, uint32_t n);
/* Copies rows out of the receive buffer into the result, in libfdb_c's layout. */
int mapped_append_rows(op *o, const cfdb_mapped_key_value *rows, uint32_t n);
/* RYW: the read conflict ranges of the primary range and the secondary reads, or
 * get_mapped_range_reads_your_writes when they meet the transaction's writes (mu held). */
int mapped_conflicts(op *o);

#endif
