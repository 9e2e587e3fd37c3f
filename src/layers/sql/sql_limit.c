/* SPDX-License-Identifier: Apache-2.0 */
/* LIMIT and OFFSET pushdown. SQLite (3.38 and later) offers a query's LIMIT and OFFSET to
 * xBestIndex as the constraints SQLITE_INDEX_CONSTRAINT_LIMIT / _OFFSET when the query reads
 * one virtual table with no GROUP BY, DISTINCT or aggregate, every WHERE term is on that table
 * and every ORDER BY term is one of its columns. Their right-hand side is the LIMIT value
 * alone (not LIMIT + OFFSET). Using them is only right when no row the scan returns is
 * dropped or reordered afterwards: then the answer is among the scan's first LIMIT + OFFSET
 * rows, and the Record Layer scan stops there (its row limit). Any residual filter (a
 * constraint SQLite checks again, one the plan does not use, an IN list), a sort SQLite adds,
 * or a scan that returns records of other tables (intermingled tables) keeps the LIMIT in
 * SQLite alone.
 *
 * The OFFSET stays SQLite's (not omitted; the scan skips nothing): each arm of a UNION ALL is
 * offered the compound's LIMIT and OFFSET, and SQLite carries what the first arm did not skip
 * over to the next one; a scan that took the OFFSET would make SQLite forget that remainder.
 * LIMIT + OFFSET bounds every arm: the values are the query's, or SQLite's counters as they
 * stand when the scan starts (what remains). */
#ifdef CFDB_SQL_EXTENSION
#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT3
#endif

#include <stddef.h>

#include "sql_limit.h"

static bool is_limit_op(int op)
{
    return op == SQLITE_INDEX_CONSTRAINT_LIMIT || op == SQLITE_INDEX_CONSTRAINT_OFFSET;
}

void sql_limit_plan_make(sqlite3_index_info *info, bool ordered, bool exact, int *argv,
                         sql_limit_plan *out)
{
    out->flags = 0;
    out->limit_c = out->offset_c = -1;
    bool usable = true;
    for (int i = 0; i < info->nConstraint; i++) {
        const struct sqlite3_index_constraint *k = &info->aConstraint[i];
        if (k->op == SQLITE_INDEX_CONSTRAINT_LIMIT)
            out->limit_c = i;
        else if (k->op == SQLITE_INDEX_CONSTRAINT_OFFSET)
            out->offset_c = i;
        else
            continue;
        usable = usable && k->usable;
    }
    if (out->limit_c < 0 || !usable || !ordered || !exact)
        return;
    /* every other constraint consumed by the scan */
    for (int i = 0; i < info->nConstraint; i++) {
        if (is_limit_op(info->aConstraint[i].op))
            continue;
        const struct sqlite3_index_constraint_usage *u = &info->aConstraintUsage[i];
        if (u->argvIndex <= 0 || !u->omit)
            return;
    }
    info->aConstraintUsage[out->limit_c].argvIndex = (*argv)++;
    info->aConstraintUsage[out->limit_c].omit = 0;
    out->flags = SQL_LIMIT_PUSHED;
    if (out->offset_c >= 0) {
        info->aConstraintUsage[out->offset_c].argvIndex = (*argv)++;
        info->aConstraintUsage[out->offset_c].omit = 0;
        out->flags |= SQL_OFFSET_PUSHED;
    }
}

static void describe_value(sqlite3_index_info *info, int c, sqlite3_str *s)
{
    sqlite3_value *v = NULL;
    if (sqlite3_vtab_rhs_value(info, c, &v) == SQLITE_OK && v &&
        sqlite3_value_type(v) == SQLITE_INTEGER)
        sqlite3_str_appendf(s, "%lld", (long long)sqlite3_value_int64(v));
    else
        sqlite3_str_appendf(s, "?");
}

void sql_limit_plan_describe(sqlite3_index_info *info, const sql_limit_plan *p, sqlite3_str *s)
{
    if (!(p->flags & SQL_LIMIT_PUSHED))
        return;
    sqlite3_str_appendf(s, " LIMIT ");
    describe_value(info, p->limit_c, s);
    if (p->flags & SQL_OFFSET_PUSHED) {
        sqlite3_str_appendf(s, " OFFSET ");
        describe_value(info, p->offset_c, s);
    }
}

void sql_limit_args_take(int idx_num, sqlite3_value **argv, int *argc, sql_limit_args *out)
{
    out->no_rows = false;
    out->limit = 0;
    int n = ((idx_num & SQL_LIMIT_PUSHED) != 0) + ((idx_num & SQL_OFFSET_PUSHED) != 0);
    if (n == 0 || *argc < n)
        return;
    *argc -= n;
    sqlite3_value *lv = argv[*argc];
    sqlite3_value *ov = n == 2 ? argv[*argc + 1] : NULL;
    if (sqlite3_value_type(lv) != SQLITE_INTEGER)
        return;
    sqlite3_int64 l = sqlite3_value_int64(lv), o = 0;
    if (ov && sqlite3_value_type(ov) == SQLITE_INTEGER && sqlite3_value_int64(ov) > 0)
        o = sqlite3_value_int64(ov);
    if (l == 0)
        out->no_rows = true;
    else if (l > 0 && l <= UINT32_MAX && o <= (sqlite3_int64)UINT32_MAX - l)
        out->limit = (uint32_t)(l + o);
}
