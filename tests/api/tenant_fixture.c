/* See tenant_fixture.h. The TenantMapEntry object is encoded with the wire library's
 * ObjectSerializer (cfdb_wire, linked into the test), from Tenant.h's serializer list. */
#include "tenant_fixture.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fb.h"
#include "messages.h"
#include "protocol_version.h"

void tf_prefix(int64_t id, uint8_t out[8])
{
    for (int i = 0; i < 8; i++)
        out[i] = (uint8_t)((uint64_t)id >> (56 - 8 * i));
}

int tf_entry_value(int64_t id, const char *name, uint8_t *out, int cap)
{
    cfdb_tenant_map_entry e;
    memset(&e, 0, sizeof e);
    e.id = id;
    e.tenantName = cfdb_bytes_make(name, strlen(name));
    fb_writer w;
    fb_writer_init(&w, 0);
    int n = 0;
    if (fb_encode(&w, &cfdb_msg_tenant_map_entry, &e, 0) == 0 && (int)fb_writer_message_len(&w) + 8 <= cap) {
        for (int i = 0; i < 8; i++)
            out[i] = (uint8_t)(CFDB_PROTOCOL_VERSION >> (8 * i));
        memcpy(out + 8, fb_writer_message(&w), fb_writer_message_len(&w));
        n = (int)fb_writer_message_len(&w) + 8;
    }
    fb_writer_free(&w);
    return n;
}

/* The tuple layer's encodings used by TupleCodec: a byte string (0x01, 0x00 escaped as
 * 0x00 0xff, then 0x00) and a non-negative integer (0x14 + its length, big-endian bytes). */
static int tuple_bytes(const char *s, uint8_t *out)
{
    int n = 0;
    out[n++] = 0x01;
    for (const char *p = s; *p; p++)
        out[n++] = (uint8_t)*p;
    out[n++] = 0x00;
    return n;
}

static int tuple_int(int64_t v, uint8_t *out)
{
    int len = 0;
    for (uint64_t x = (uint64_t)v; x; x >>= 8)
        len++;
    out[0] = (uint8_t)(0x14 + len);
    for (int i = 0; i < len; i++)
        out[1 + i] = (uint8_t)((uint64_t)v >> (8 * (len - 1 - i)));
    return 1 + len;
}

static int64_t tuple_int_read(const uint8_t *v, int len)
{
    if (len < 1 || v[0] < 0x14 || v[0] > 0x1c || len != 1 + (v[0] - 0x14))
        return 0;
    int64_t x = 0;
    for (int i = 1; i < len; i++)
        x = (x << 8) | v[i];
    return x;
}

static int name_index_key(const char *name, uint8_t *out)
{
    static const char p[] = "\xff/tenant/nameIndex/";
    memcpy(out, p, sizeof p - 1);
    return (int)(sizeof p - 1) + tuple_bytes(name, out + sizeof p - 1);
}

static int map_key(int64_t id, uint8_t *out)
{
    static const char p[] = "\xff/tenant/map/";
    memcpy(out, p, sizeof p - 1);
    tf_prefix(id, out + sizeof p - 1);
    return (int)(sizeof p - 1) + 8;
}

static void count_add(FDBTransaction *tr, int64_t delta)
{
    uint8_t le[8];
    for (int i = 0; i < 8; i++)
        le[i] = (uint8_t)((uint64_t)delta >> (8 * i));
    fdb_transaction_atomic_op(tr, S("\xff/tenant/count"), L("\xff/tenant/count"), le, 8, FDB_MUTATION_TYPE_ADD);
}

fdb_error_t tf_create_tenant(FDBDatabase *db, const char *name, int64_t *id)
{
    FDBTransaction *tr;
    fdb_error_t e = fdb_database_create_transaction(db, &tr);
    if (e)
        return e;
    for (;;) {
        fdb_transaction_set_option(tr, FDB_TR_OPTION_ACCESS_SYSTEM_KEYS, NULL, 0);
        FDBFuture *f = fdb_transaction_get(tr, S("\xff/tenant/lastId"), L("\xff/tenant/lastId"), 0);
        e = api_wait(f);
        fdb_bool_t present = 0;
        const uint8_t *v = NULL;
        int vlen = 0;
        if (!e)
            e = fdb_future_get_value(f, &present, &v, &vlen);
        int64_t next = (!e && present ? tuple_int_read(v, vlen) : 0) + 1;
        fdb_future_destroy(f);
        if (!e) {
            uint8_t k[128], val[512];
            int kl = map_key(next, k);
            int vl = tf_entry_value(next, name, val, sizeof val);
            fdb_transaction_set(tr, k, kl, val, vl);
            kl = name_index_key(name, k);
            vl = tuple_int(next, val);
            fdb_transaction_set(tr, k, kl, val, vl);
            fdb_transaction_set(tr, S("\xff/tenant/lastId"), L("\xff/tenant/lastId"), val, vl);
            count_add(tr, 1);
            e = api_commit(tr);
            if (!e) {
                *id = next;
                break;
            }
        }
        if ((e = api_on_error(tr, e)) != 0)
            break;
    }
    fdb_transaction_destroy(tr);
    return e;
}

fdb_error_t tf_delete_tenant(FDBDatabase *db, const char *name, int64_t id)
{
    FDBTransaction *tr;
    fdb_error_t e = fdb_database_create_transaction(db, &tr);
    if (e)
        return e;
    for (;;) {
        fdb_transaction_set_option(tr, FDB_TR_OPTION_ACCESS_SYSTEM_KEYS, NULL, 0);
        uint8_t k[128];
        int kl = map_key(id, k);
        fdb_transaction_clear(tr, k, kl);
        kl = name_index_key(name, k);
        fdb_transaction_clear(tr, k, kl);
        count_add(tr, -1);
        e = api_commit(tr);
        if (!e || (e = api_on_error(tr, e)) != 0)
            break;
    }
    fdb_transaction_destroy(tr);
    return e;
}

fdb_error_t tf_set_tenant_mode(FDBDatabase *db, int mode)
{
    FDBTransaction *tr;
    fdb_error_t e = fdb_database_create_transaction(db, &tr);
    if (e)
        return e;
    char v[2] = { (char)('0' + mode), 0 };
    for (;;) {
        fdb_transaction_set_option(tr, FDB_TR_OPTION_ACCESS_SYSTEM_KEYS, NULL, 0);
        fdb_transaction_set(tr, S("\xff/conf/tenant_mode"), L("\xff/conf/tenant_mode"), S(v), 1);
        e = api_commit(tr);
        if (!e || (e = api_on_error(tr, e)) != 0)
            break;
    }
    fdb_transaction_destroy(tr);
    return e;
}

FDBTenant *tf_open_tenant(const char *name)
{
    FDBTenant *t = NULL;
    assert_int_equal(fdb_database_open_tenant(g_env.db, S(name), L(name), &t), 0);
    assert_non_null(t);
    return t;
}

FDBTransaction *tf_tenant_tr(FDBTenant *t)
{
    FDBTransaction *tr = NULL;
    assert_int_equal(fdb_tenant_create_transaction(t, &tr), 0);
    return tr;
}

void tf_tenant_set(FDBTenant *t, const char *key, const char *value)
{
    FDBTransaction *tr = tf_tenant_tr(t);
    for (;;) {
        if (value)
            fdb_transaction_set(tr, S(key), L(key), S(value), L(value));
        else
            fdb_transaction_clear(tr, S(key), L(key));
        fdb_error_t e = api_commit(tr);
        if (!e)
            break;
        assert_int_equal(api_on_error(tr, e), 0);
    }
    fdb_transaction_destroy(tr);
}
