/* SPDX-License-Identifier: Apache-2.0 */
/* SQL continuations in fdb-relational's form: the ContinuationProto of
 * fdb-relational-core/src/main/proto/continuation.proto —
 *   version = 1 (int32, field 1), execution_state = 2 (bytes: the Record Layer cursor's
 *   continuation), binding_hash = 3 (int32), plan_hash = 4 (int32), reason = 6
 *   (CURSOR_AFTER_LAST = 3 when the scan ended)
 * — so that a continuation given to another query (another plan or other bound values) is
 * refused instead of resuming somewhere meaningless. The hashes are cfdb's own (FNV-1a over the
 * plan and over the scan's range), not Java's plan hashes. */
#include <string.h>

#include "cfdb/errors.h"
#include "sql_internal.h"

uint32_t sql_hash32(uint32_t h, const void *p, size_t n)
{
    const uint8_t *b = p;
    if (!h)
        h = 2166136261u;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 16777619u;
    return h;
}

static size_t put_varint(uint8_t *o, uint64_t v)
{
    size_t n = 0;
    do {
        o[n] = (uint8_t)(v & 0x7f);
        v >>= 7;
        if (v)
            o[n] |= 0x80;
        n++;
    } while (v);
    return n;
}

int sql_cont_encode(cfdb_arena *a, const sql_cont *c, cfdb_bytes *out)
{
    uint8_t *b = cfdb_arena_alloc(a, c->state.len + 64);
    if (!b)
        return CFDB_ERR_OUT_OF_MEMORY;
    size_t n = 0;
    b[n++] = 0x08;
    n += put_varint(b + n, 1);
    if (!c->at_end) {
        b[n++] = 0x12;
        n += put_varint(b + n, c->state.len);
        if (c->state.len)
            memcpy(b + n, c->state.ptr, c->state.len);
        n += c->state.len;
    }
    b[n++] = 0x18;
    n += put_varint(b + n, (uint64_t)(int64_t)(int32_t)c->binding_hash);
    b[n++] = 0x20;
    n += put_varint(b + n, (uint64_t)(int64_t)(int32_t)c->plan_hash);
    if (c->at_end) {
        b[n++] = 0x30;
        n += put_varint(b + n, 3);
    }
    out->ptr = b;
    out->len = (uint32_t)n;
    return 0;
}

static int get_varint(const uint8_t *p, size_t len, size_t *i, uint64_t *v)
{
    *v = 0;
    for (int shift = 0; shift < 70; shift += 7) {
        if (*i >= len)
            return CFDB_ERR_CLIENT_INVALID_OPERATION;
        uint8_t b = p[(*i)++];
        *v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80))
            return 0;
    }
    return CFDB_ERR_CLIENT_INVALID_OPERATION;
}

int sql_cont_decode(cfdb_bytes in, sql_cont *c)
{
    memset(c, 0, sizeof *c);
    size_t i = 0;
    bool have_version = false, have_plan = false;
    while (i < in.len) {
        uint64_t tag, v;
        if (get_varint(in.ptr, in.len, &i, &tag))
            return CFDB_ERR_CLIENT_INVALID_OPERATION;
        uint32_t field = (uint32_t)(tag >> 3), wt = (uint32_t)(tag & 7);
        if (wt == 0) {
            if (get_varint(in.ptr, in.len, &i, &v))
                return CFDB_ERR_CLIENT_INVALID_OPERATION;
            if (field == 1) {
                if (v != 1)
                    return CFDB_ERR_CLIENT_INVALID_OPERATION;
                have_version = true;
            } else if (field == 3) {
                c->binding_hash = (uint32_t)v;
            } else if (field == 4) {
                c->plan_hash = (uint32_t)v;
                have_plan = true;
            } else if (field == 6) {
                c->at_end = v == 3;
            }
        } else if (wt == 2) {
            if (get_varint(in.ptr, in.len, &i, &v) || v > in.len - i)
                return CFDB_ERR_CLIENT_INVALID_OPERATION;
            if (field == 2)
                c->state = (cfdb_bytes){ in.ptr + i, (uint32_t)v };
            i += (size_t)v;
        } else {
            return CFDB_ERR_CLIENT_INVALID_OPERATION;
        }
    }
    if (!have_version || !have_plan)
        return CFDB_ERR_CLIENT_INVALID_OPERATION;
    return 0;
}
