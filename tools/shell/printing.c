/* SPDX-License-Identifier: Apache-2.0 */
/* Printing keys and values: FoundationDB's printable() and cfdb's tuple form (see
 * printing.h). Tuples are unpacked into a stack-owned arena released before returning. */
#include "printing.h"

#include <stdlib.h>
#include <string.h>

#include "cfdb/arena.h"
#include "cfdb/tuple.h"

void shell_print_printable(FILE *f, const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint8_t c = p[i];
        if (c == '\\')
            fputs("\\\\", f);
        else if (c >= 32 && c <= 126)
            fputc(c, f);
        else
            fprintf(f, "\\x%02x", c);
    }
}

/* Python-like quoted string: ' and \\ escaped, \t \n \r named, other control bytes (and,
 * for byte strings, bytes >= 0x80) as \xNN. */
static void quoted(FILE *f, const uint8_t *p, size_t n, bool bytes)
{
    fputs(bytes ? "b'" : "'", f);
    for (size_t i = 0; i < n; i++) {
        uint8_t c = p[i];
        if (c == '\'' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c == '\t')
            fputs("\\t", f);
        else if (c == '\n')
            fputs("\\n", f);
        else if (c == '\r')
            fputs("\\r", f);
        else if (c < 32 || c == 127 || (bytes && c >= 128))
            fprintf(f, "\\x%02x", c);
        else
            fputc(c, f);
    }
    fputc('\'', f);
}

/* The decimal digits of a big-endian magnitude (at most 255 bytes: < 620 digits). */
static void big_decimal(FILE *f, bool negative, const uint8_t *mag, size_t n)
{
    uint8_t work[255];
    char digits[640];
    size_t nd = 0;
    memcpy(work, mag, n);
    size_t start = 0;
    while (start < n) {
        unsigned rem = 0;
        for (size_t i = start; i < n; i++) {
            unsigned cur = rem * 256 + work[i];
            work[i] = (uint8_t)(cur / 10);
            rem = cur % 10;
        }
        digits[nd++] = (char)('0' + rem);
        while (start < n && work[start] == 0)
            start++;
    }
    if (negative)
        fputc('-', f);
    if (nd == 0)
        fputc('0', f);
    while (nd)
        fputc(digits[--nd], f);
}

/* The shortest %g form that reads back as the same double (Python's repr), with ".0"
 * when it would look like an integer. */
static void shortest(FILE *f, double d)
{
    char buf[64];
    if (d != d) {
        fputs("nan", f);
        return;
    }
    if (d == 1.0 / 0.0 || d == -1.0 / 0.0) {
        fputs(d > 0 ? "inf" : "-inf", f);
        return;
    }
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, sizeof buf, "%.*g", prec, d);
        if (strtod(buf, NULL) == d)
            break;
    }
    fputs(buf, f);
    if (!strpbrk(buf, ".en"))
        fputs(".0", f);
}

static void tuple_body(FILE *f, const cfdb_tuple *t)
{
    fputc('(', f);
    for (uint32_t i = 0; i < t->count; i++) {
        const cfdb_tuple_elem *e = &t->elems[i];
        if (i)
            fputs(", ", f);
        switch (e->type) {
        case CFDB_TUPLE_NULL: fputs("None", f); break;
        case CFDB_TUPLE_BYTES: quoted(f, e->v.bytes.ptr, e->v.bytes.len, true); break;
        case CFDB_TUPLE_STRING: quoted(f, e->v.bytes.ptr, e->v.bytes.len, false); break;
        case CFDB_TUPLE_NESTED: tuple_body(f, e->v.nested); break;
        case CFDB_TUPLE_INT: fprintf(f, "%lld", (long long)e->v.i); break;
        case CFDB_TUPLE_BIGINT:
            big_decimal(f, e->v.big.negative, e->v.big.magnitude.ptr, e->v.big.magnitude.len);
            break;
        case CFDB_TUPLE_FLOAT: shortest(f, e->v.f); break;
        case CFDB_TUPLE_DOUBLE: shortest(f, e->v.d); break;
        case CFDB_TUPLE_BOOL: fputs(e->v.b ? "True" : "False", f); break;
        case CFDB_TUPLE_UUID: {
            const uint8_t *u = e->v.uuid;
            fputs("UUID('", f);
            for (int k = 0; k < 16; k++)
                fprintf(f, "%s%02x", (k == 4 || k == 6 || k == 8 || k == 10) ? "-" : "", u[k]);
            fputs("')", f);
            break;
        }
        case CFDB_TUPLE_VERSIONSTAMP:
        case CFDB_TUPLE_VERSIONSTAMP80:
            fputs("Versionstamp(", f);
            if (cfdb_tuple_versionstamp_is_incomplete(e)) {
                fputs("incomplete", f);
            } else {
                for (int k = 0; k < 10; k++)
                    fprintf(f, "%02x", e->v.vs[k]);
            }
            if (e->type == CFDB_TUPLE_VERSIONSTAMP)
                fprintf(f, ", %u", (unsigned)e->v.vs[10] << 8 | e->v.vs[11]);
            fputc(')', f);
            break;
        }
    }
    if (t->count == 1)
        fputc(',', f);
    fputc(')', f);
}

bool shell_print_tuple(FILE *f, const uint8_t *p, size_t n)
{
    cfdb_arena a;
    cfdb_arena_init(&a);
    cfdb_tuple t;
    bool ok = n > 0 && cfdb_tuple_unpack(&a, (cfdb_bytes){p, (uint32_t)n}, &t) == 0;
    if (ok)
        tuple_body(f, &t);
    cfdb_arena_free(&a);
    return ok;
}

void shell_print_bytes(FILE *f, const uint8_t *p, size_t n, bool tuple_mode)
{
    if (tuple_mode && shell_print_tuple(f, p, n))
        return;
    shell_print_printable(f, p, n);
}
