/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_sql_ddl: the SQL layer's DDL parser (src/layers/sql/sql_ddl.c) on arbitrary bytes:
 * it must either refuse with 2000 and a message or give a statement whose parts are sane,
 * never crash, hang or read past the input. An input starting with byte 0x01 is instead a SQL
 * continuation (sql_cont.c): decoded (or refused with 2000), and a decoded one re-encodes to
 * a continuation that decodes to the same fields. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cfdb/errors.h"
#include "sql_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
static int continuation(const uint8_t *data, size_t size)
{
    sql_cont c;
    cfdb_bytes in = { data, (uint32_t)size };
    int rc = sql_cont_decode(in, &c);
    if (rc) {
        if (rc != CFDB_ERR_CLIENT_INVALID_OPERATION)
            abort();
        return 0;
    }
    cfdb_arena a;
    cfdb_arena_init(&a);
    cfdb_bytes enc;
    sql_cont d;
    if (sql_cont_encode(&a, &c, &enc) || sql_cont_decode(enc, &d) || d.plan_hash != c.plan_hash ||
        d.binding_hash != c.binding_hash || d.at_end != c.at_end ||
        (!c.at_end && (d.state.len != c.state.len ||
                       (c.state.len && memcmp(d.state.ptr, c.state.ptr, c.state.len)))))
        abort();
    cfdb_arena_free(&a);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size && data[0] == 0x01)
        return continuation(data + 1, size - 1);
    /* the parser reads exactly len bytes: hand it a copy without a terminator */
    char *text = malloc(size ? size : 1);
    if (!text)
        return 0;
    if (size)
        memcpy(text, data, size);
    cfdb_arena a;
    cfdb_arena_init(&a);
    sql_ddl *d = NULL;
    char err[256];
    err[0] = 0;
    int rc = sql_ddl_parse(&a, text, size, &d, err, sizeof err);
    if (rc) {
        if ((rc != CFDB_ERR_CLIENT_INVALID_OPERATION && rc != CFDB_ERR_OUT_OF_MEMORY) || d ||
            !err[0])
            abort();
    } else {
        if (!d)
            abort();
        if (d->kind == SQL_DDL_CREATE_TEMPLATE) {
            const sql_template *t = d->tmpl;
            if (!t || t->ntables == 0)
                abort();
            for (uint32_t i = 0; i < t->ntables; i++) {
                if (t->tables[i].npk == 0 || t->tables[i].ncols == 0)
                    abort();
                for (uint32_t k = 0; k < t->tables[i].npk; k++)
                    if (t->tables[i].pk[k] >= t->tables[i].ncols)
                        abort();
            }
            for (uint32_t i = 0; i < t->nindexes; i++)
                if (!t->indexes[i].name || !t->indexes[i].table)
                    abort();
        } else if (d->kind == SQL_DDL_CREATE_SCHEMA && (!d->path || !d->name || !d->template_name)) {
            abort();
        }
    }
    cfdb_arena_free(&a);
    free(text);
    return 0;
}
