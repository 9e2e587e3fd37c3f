/* \xff\xff/configuration/: the implementations registered in it at 7.3.77, in key order:
 *   coordinators/cluster_description, coordinators/processes   answered from the
 *       connection string (CoordinatorsImpl): the description, and the coordinators'
 *       addresses sorted as strings and joined by ","; the transaction's own writes laid
 *       over them. At commit: special_coordinators.c (changeQuorumChecker); clears fail
 *       as libfdb_c's (special_keys.c).
 *   process/class_source/, process/class_type/   special_process_class.c. */
#include <stdlib.h>
#include <string.h>

#include "error_codes.h"
#include "database.h"
#include "special_keys_internal.h"
#include "txn_api.h"

#define COORDINATORS SK_CONF "coordinators/"

static int by_text(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int sk_coordinators_read(cfdb_txn *tx, cfdb_bytes begin, cfdb_bytes end, cfdb_arena *a, sk_rows *out)
{
    cfdb_future *f = cfdb_db_text_value(cfdb_txn_db(tx), CFDB_DB_CONNECTION_STRING);
    if (!f)
        return CFDB_ERR_UNKNOWN_ERROR;
    cfdb_future_wait(f);
    int rc = f->error;
    char *cs = NULL;
    if (!rc && f->r.value.present && (cs = cfdb_arena_alloc(a, f->r.value.value.len + 1)) != NULL) {
        memcpy(cs, f->r.value.value.ptr, f->r.value.value.len);
        cs[f->r.value.value.len] = 0;
    } else if (!rc) {
        rc = CFDB_ERR_UNKNOWN_ERROR;
    }
    cfdb_future_unref(f);
    if (rc)
        return rc;
    /* description:id@addr,addr,... */
    char *colon = strchr(cs, ':'), *at = strchr(cs, '@');
    if (!colon || !at || at < colon)
        return CFDB_ERR_CONNECTION_STRING_INVALID;
    sk_rows db = { 0 };
    cfdb_bytes dk = CFDB_BYTES_LIT(COORDINATORS "cluster_description");
    if (cfdb_bytes_cmp(dk, begin) >= 0 && cfdb_bytes_cmp(dk, end) < 0)
        rc = sk_rows_push(&db, a, dk, cfdb_bytes_make(cs, (size_t)(colon - cs)));
    /* the addresses, sorted as strings */
    char *list = at + 1;
    size_t n = 1;
    for (char *p = list; *p; p++)
        n += *p == ',';
    char **addrs = cfdb_arena_alloc(a, n * sizeof *addrs);
    if (!addrs)
        return CFDB_ERR_UNKNOWN_ERROR;
    size_t k = 0;
    for (char *p = list, *save = NULL, *t = strtok_r(p, ",", &save); t; t = strtok_r(NULL, ",", &save))
        addrs[k++] = t;
    qsort(addrs, k, sizeof *addrs, by_text);
    size_t len = 0;
    for (size_t i = 0; i < k; i++)
        len += strlen(addrs[i]) + 1;
    char *joined = cfdb_arena_alloc(a, len + 1);
    if (!joined)
        return CFDB_ERR_UNKNOWN_ERROR;
    joined[0] = 0;
    size_t o = 0;
    for (size_t i = 0; i < k; i++) {
        size_t l = strlen(addrs[i]);
        if (i)
            joined[o++] = ',';
        memcpy(joined + o, addrs[i], l);
        o += l;
    }
    cfdb_bytes pk = CFDB_BYTES_LIT(COORDINATORS "processes");
    if (!rc && cfdb_bytes_cmp(pk, begin) >= 0 && cfdb_bytes_cmp(pk, end) < 0)
        rc = sk_rows_push(&db, a, pk, cfdb_bytes_make(joined, o));
    if (rc)
        return rc;
    return sk_ryw_merge(tx, begin, end, a, &db, out);
}
