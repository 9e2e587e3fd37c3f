/* SPDX-License-Identifier: Apache-2.0 */
/* The json_spirit-style pretty printer fdbcli uses for `status json' (see json.h): the
 * shared writer's json_spirit layout over the reader's values. */
#include "json.h"

#include "json_writer.h"

static void pretty(cfdb_json *w, const cfdb_jv *j)
{
    switch (j->type) {
    case JSON_NULL: cfdb_json_null(w); break;
    case JSON_BOOL: cfdb_json_bool(w, j->b); break;
    case JSON_INT: cfdb_json_digits(w, j->text, j->len); break;
    case JSON_REAL: cfdb_json_real(w, j->real, 17); break;
    case JSON_STRING: cfdb_json_string_n(w, j->text, j->len); break;
    case JSON_ARRAY:
    case JSON_OBJECT:
        if (j->type == JSON_OBJECT)
            cfdb_json_begin_object(w);
        else
            cfdb_json_begin_array(w);
        for (size_t i = 0; i < j->count; i++) {
            if (j->type == JSON_OBJECT)
                cfdb_json_key_n(w, j->items[i]->name, j->items[i]->name_len);
            pretty(w, j->items[i]);
        }
        if (j->type == JSON_OBJECT)
            cfdb_json_end_object(w);
        else
            cfdb_json_end_array(w);
        break;
    }
}

void shell_json_pretty(FILE *f, const cfdb_jv *j)
{
    cfdb_json w;
    cfdb_json_init_layout(&w, CFDB_JSON_SPIRIT);
    pretty(&w, j);
    if (!w.failed)
        fwrite(w.buf, 1, w.len, f);
    cfdb_json_free(&w);
}
