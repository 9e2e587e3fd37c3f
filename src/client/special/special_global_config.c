/* \xff\xff/global_config/ (7.3.77 fdbclient/SpecialKeySpace.actor.cpp GlobalConfigImpl,
 * fdbclient/GlobalConfig.actor.cpp GlobalConfig::applyChanges).
 *
 * Reads answer from the database's global-config view (global_config.h), never from the
 * transaction's own writes and never from the database at read time: GlobalConfigImpl::getRange
 * strips the module prefix from both ends of the range it is given by its byte count
 * (StringRef::removePrefix checks only the size), so a read up to the module's end
 * (\xff\xff/global_config0) becomes an empty end: from the module's first key that is an empty
 * range (no rows), from any later key an inverted range (inverted_range, 2005). Values are
 * shown as text: strings as they are, integers in decimal, bools as "1"/"0", floats and
 * doubles as std::to_string prints them ("%f"); a versionstamp value trips the ASSERT there
 * (internal_error, 4100).
 *
 * Writes are recorded as given (sets and clears, single or range). At commit
 * (globalConfigCommitActor), on the transaction itself:
 *   1. the history \xff/globalConfig/h/ is read; beyond its 2 newest entries the oldest are
 *      cleared one key at a time (at most 3 entries after this commit);
 *   2. every written range of the special key space in key order: a set whose key has the
 *      module prefix becomes an insertion (bare key, value as given), a clear whose both ends
 *      have the prefix a clear of the bare range (a clear up to \xff\xff/global_config0 has no
 *      effect but still commits a history entry);
 *   3. applyChanges: \xff/globalConfig/k/<bare> = value for each insertion, then each clear of
 *      [\xff/globalConfig/k/<b>, \xff/globalConfig/k/<e>); a SetVersionstampedKey at
 *      \xff/globalConfig/h/ + 10 zero bytes + the 4-byte little-endian offset 18, whose value
 *      is IncludeVersion (the protocol version, 8 bytes little-endian) + the flat buffer of
 *      VersionHistory{mutations: SetValue(bare, value)... then ClearRange(b, e)..., version 0};
 *      a SetVersionstampedValue of \xff/globalConfig/v with "0123456789" + 4 zero bytes.
 * Values are stored as given: a reader (GlobalConfig::insert) keeps only tuple values. */
#include <string.h>

#include "error_codes.h"
#include "fb.h"
#include "messages.h"
#include "protocol_version.h"
#include "foundationdb/fdb_c_options.g.h"
#include "global_config.h"
#include "special_keys_internal.h"
#include "txn_api.h"

#define GC_PREFIX "\xff\xff/global_config/"
#define GC_PL (sizeof GC_PREFIX - 1)

int sk_gc_read(cfdb_txn *tx, cfdb_bytes begin, cfdb_bytes end, cfdb_arena *a, sk_rows *out)
{
    /* removePrefix by size: both ends are at least the prefix long (inside the module) */
    cfdb_bytes b = cfdb_bytes_make(begin.ptr + GC_PL, begin.len - GC_PL);
    cfdb_bytes e = cfdb_bytes_make(end.ptr + GC_PL, end.len - GC_PL);
    if (cfdb_bytes_cmp(b, e) > 0)
        return CFDB_ERR_INVERTED_RANGE; /* KeyRangeRef's constructor */
    cfdb_gc_view *v = cfdb_db_gc_view(cfdb_txn_db(tx));
    if (!v)
        return 0;
    cfdb_gc_entry *items;
    size_t n;
    int rc = cfdb_gc_get_range(v, b, e, a, &items, &n);
    for (size_t i = 0; !rc && i < n; i++) {
        const cfdb_gc_value *val = &items[i].value;
        char text[400];
        cfdb_bytes shown;
        switch (val->type) {
        case CFDB_GC_STRING:
            shown = val->str;
            break;
        case CFDB_GC_INT:
            snprintf(text, sizeof text, "%lld", (long long)val->i);
            shown = cfdb_bytes_str(text);
            break;
        case CFDB_GC_BOOL:
            shown = cfdb_bytes_str(val->b ? "1" : "0");
            break;
        case CFDB_GC_FLOAT:
        case CFDB_GC_DOUBLE:
            snprintf(text, sizeof text, "%f", val->d);
            shown = cfdb_bytes_str(text);
            break;
        default:
            return CFDB_ERR_INTERNAL_ERROR; /* ASSERT(false) on any other type */
        }
        cfdb_bytes key = sk_key(a, GC_PREFIX, items[i].key);
        rc = key.ptr ? sk_rows_push(out, a, key, shown) : CFDB_ERR_UNKNOWN_ERROR;
    }
    return rc;
}

static cfdb_bytes after(cfdb_arena *a, cfdb_bytes k)
{
    uint8_t *p = cfdb_arena_alloc(a, k.len + 1);
    if (!p)
        return cfdb_bytes_make(NULL, 0);
    memcpy(p, k.ptr, k.len);
    p[k.len] = 0;
    return cfdb_bytes_make(p, k.len + 1);
}

int sk_gc_commit(cfdb_txn *tx, cfdb_arena *a)
{
    /* 1. keep room for this commit's entry in a history of at most 3 */
    sk_rows hist;
    int rc = skw_range(tx, CFDB_BYTES_LIT(CFDB_GC_HISTORY_PREFIX), CFDB_BYTES_LIT("\xff/globalConfig/h0"), 0, a, &hist);
    for (int i = 0; !rc && hist.n > 2 && i < hist.n - 2; i++) {
        cfdb_bytes k = cfdb_bytes_make(hist.items[i].key, (size_t)hist.items[i].key_length);
        cfdb_bytes ka = after(a, k);
        rc = ka.ptr ? skw_clear(tx, k, ka) : CFDB_ERR_UNKNOWN_ERROR;
    }
    if (rc)
        return rc;
    /* 2. the written ranges, insertions and clears */
    sk_entries all;
    rc = sk_collect(tx, CFDB_BYTES_LIT("\xff\xff"), CFDB_BYTES_LIT("\xff\xff\xff"), a, &all);
    if (rc)
        return rc;
    cfdb_mutation *muts = cfdb_arena_alloc(a, (all.n ? all.n : 1) * sizeof *muts);
    if (!muts)
        return CFDB_ERR_UNKNOWN_ERROR;
    size_t nm = 0;
    for (int pass = 0; pass < 2; pass++) /* insertions first, then clears */
        for (size_t i = 0; i < all.n; i++) {
            const sk_write *w = &all.items[i];
            if (pass == 0 && w->has_value && sk_has_prefix(w->begin, GC_PREFIX))
                muts[nm++] = (cfdb_mutation){ CFDB_MUT_SET_VALUE,
                                              cfdb_bytes_make(w->begin.ptr + GC_PL, w->begin.len - GC_PL), w->value };
            else if (pass == 1 && !w->has_value && sk_has_prefix(w->begin, GC_PREFIX) &&
                     sk_has_prefix(w->end, GC_PREFIX))
                muts[nm++] = (cfdb_mutation){ CFDB_MUT_CLEAR_RANGE,
                                              cfdb_bytes_make(w->begin.ptr + GC_PL, w->begin.len - GC_PL),
                                              cfdb_bytes_make(w->end.ptr + GC_PL, w->end.len - GC_PL) };
        }
    return sk_gc_apply_changes(tx, a, muts, nm);
}

int sk_gc_apply_changes(cfdb_txn *tx, cfdb_arena *a, cfdb_mutation *muts, size_t nm)
{
    int rc = 0;
    for (size_t i = 0; !rc && i < nm; i++) {
        cfdb_bytes k = sk_key(a, CFDB_GC_DATA_PREFIX, muts[i].param1);
        if (!k.ptr)
            return CFDB_ERR_UNKNOWN_ERROR;
        if (muts[i].type == CFDB_MUT_SET_VALUE) {
            rc = skw_set(tx, k, muts[i].param2);
        } else {
            cfdb_bytes e = sk_key(a, CFDB_GC_DATA_PREFIX, muts[i].param2);
            rc = e.ptr ? skw_clear(tx, k, e) : CFDB_ERR_UNKNOWN_ERROR;
        }
    }
    if (rc)
        return rc;
    cfdb_version_history vh = { .mutations = { .items = muts, .count = (uint32_t)nm }, .version = 0 };
    cfdb_bytes value;
    rc = fb_encode_versioned(&cfdb_msg_version_history, &vh, a, &value);
    if (rc)
        return rc;
    static const char hp[] = CFDB_GC_HISTORY_PREFIX;
    uint8_t hkey[sizeof hp - 1 + 14];
    int32_t off = (int32_t)(sizeof hp - 1);
    memcpy(hkey, hp, sizeof hp - 1);
    memset(hkey + off, 0, 10);
    memcpy(hkey + off + 10, &off, 4); /* addVersionStampAtEnd: little-endian offset */
    rc = skw_atomic(tx, cfdb_bytes_make(hkey, sizeof hkey), value, FDB_MUTATION_TYPE_SET_VERSIONSTAMPED_KEY);
    if (!rc) {
        static const uint8_t stamp[14] = { '0', '1', '2', '3', '4', '5', '6', '7', '8', '9', 0, 0, 0, 0 };
        rc = skw_atomic(tx, CFDB_BYTES_LIT(CFDB_GC_VERSION_KEY), cfdb_bytes_make(stamp, sizeof stamp),
                        FDB_MUTATION_TYPE_SET_VERSIONSTAMPED_VALUE);
    }
    return rc;
}
