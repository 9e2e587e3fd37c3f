/* Readable text for decoded messages: the decoder tool and the tests compare values with it. */
#include <inttypes.h>

#include "fb_internal.h"

static void indent(fb_printer *pr)
{
    for (int i = 0; i < pr->indent; i++)
        fputs("  ", pr->out);
}

void fb_print_bytes(fb_printer *pr, cfdb_bytes b)
{
    if (pr->bytes_as_hex) {
        fputs("x'", pr->out);
        for (uint32_t i = 0; i < b.len; i++)
            fprintf(pr->out, "%02x", b.ptr[i]);
        fputc('\'', pr->out);
        return;
    }
    fputc('"', pr->out);
    for (uint32_t i = 0; i < b.len; i++) {
        uint8_t c = b.ptr[i];
        if (c >= 32 && c < 127 && c != '\\' && c != '"')
            fputc(c, pr->out);
        else
            fprintf(pr->out, "\\x%02x", c);
    }
    fputc('"', pr->out);
}

static void print_scalar(fb_printer *pr, const fb_type *t, const void *p)
{
    FILE *o = pr->out;
    switch (t->kind) {
    case FB_BOOL: fputs(*(const bool *)p ? "true" : "false", o); break;
    case FB_U8: fprintf(o, "%u", *(const uint8_t *)p); break;
    case FB_I8: fprintf(o, "%d", *(const int8_t *)p); break;
    case FB_U16: fprintf(o, "%u", *(const uint16_t *)p); break;
    case FB_I16: fprintf(o, "%d", *(const int16_t *)p); break;
    case FB_U32: fprintf(o, "%" PRIu32, *(const uint32_t *)p); break;
    case FB_I32: fprintf(o, "%" PRId32, *(const int32_t *)p); break;
    case FB_U64: fprintf(o, "%" PRIu64, *(const uint64_t *)p); break;
    case FB_I64: fprintf(o, "%" PRId64, *(const int64_t *)p); break;
    case FB_F64: fprintf(o, "%.17g", *(const double *)p); break;
    case FB_UID: {
        char buf[33];
        fputs(cfdb_uid_format(*(const cfdb_uid *)p, buf), o);
        break;
    }
    case FB_TAG: {
        const cfdb_tag *tag = p;
        fprintf(o, "%d:%u", tag->locality, tag->id);
        break;
    }
    default: break;
    }
}

void fb_print_value(fb_printer *pr, const fb_type *t, const void *obj)
{
    FILE *o = pr->out;
    if (fb_is_scalar(t)) {
        print_scalar(pr, t, obj);
        return;
    }
    switch (t->kind) {
    case FB_BYTES:
        fb_print_bytes(pr, *(const cfdb_bytes *)obj);
        break;
    case FB_BLOB:
        t->blob->print(obj, pr);
        break;
    case FB_UNION: {
        uint8_t tag = *(const uint8_t *)obj;
        if (tag == 0 || tag > t->nalts) {
            fputs("none", o);
            break;
        }
        const fb_alt *alt = &t->alts[tag - 1];
        if (t->nalts > 1)
            fprintf(o, "<%s> ", alt->type->name);
        fb_print_value(pr, alt->type, (const unsigned char *)obj + alt->offset);
        break;
    }
    case FB_VECTOR: {
        const cfdb_vec *v = obj;
        if (v->count == 0) {
            fputs("[]", o);
            break;
        }
        fprintf(o, "[ # %u\n", v->count);
        pr->indent++;
        for (uint32_t i = 0; i < v->count; i++) {
            indent(pr);
            fb_print_value(pr, t->elem, (const unsigned char *)v->items + (size_t)i * t->elem->csize);
            fputc('\n', o);
        }
        pr->indent--;
        indent(pr);
        fputc(']', o);
        break;
    }
    case FB_TABLE: {
        fprintf(o, "%s {", t->name);
        if (t->nfields == 0) {
            fputc('}', o);
            break;
        }
        fputc('\n', o);
        pr->indent++;
        for (uint32_t i = 0; i < t->nfields; i++) {
            const fb_field *f = &t->fields[i];
            indent(pr);
            fprintf(o, "%s: ", f->name);
            fb_print_value(pr, f->type, (const unsigned char *)obj + f->offset);
            fputc('\n', o);
        }
        pr->indent--;
        indent(pr);
        fputc('}', o);
        break;
    }
    default:
        break;
    }
}

void fb_print_message(fb_printer *pr, const fb_message *m, const void *item, cfdb_reply_error error)
{
    indent(pr);
    if (m->kind == FB_MSG_REPLY && error) {
        fprintf(pr->out, "%s (file id %u) = Error %u\n", m->name, m->file_id, error);
        return;
    }
    fprintf(pr->out, "%s (file id %u) = ", m->name, m->file_id);
    fb_print_value(pr, m->item, item);
    fputc('\n', pr->out);
}
