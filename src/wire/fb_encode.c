/* Flat-buffer encoder. Objects are laid out front to back in pre-order: a table, then each
 * of its out-of-line children, so every uoffset points forward as the reader requires.
 * vtables are written just before the first table that uses them and shared afterwards. */
#include <stdlib.h>
#include <string.h>

#include "wire_errors.h"
#include "fb_internal.h"

/* Large enough for any table's C struct that has a pre_encode hook. */
#define FB_PRE_ENCODE_MAX 256

void fb_writer_init(fb_writer *w, size_t headroom)
{
    memset(w, 0, sizeof *w);
    fb_writer_reset(w, headroom);
}

void fb_writer_reset(fb_writer *w, size_t headroom)
{
    w->base = headroom;
    w->len = headroom;
    w->err = 0;
    w->vt_count = 0;
}

void fb_writer_free(fb_writer *w)
{
    free(w->buf);
    memset(w, 0, sizeof *w);
}

static int grow(fb_writer *w, size_t more)
{
    if (w->err)
        return w->err;
    size_t cap = w->cap ? w->cap : 256;
    while (cap < w->len + more)
        cap *= 2;
    uint8_t *nb = realloc(w->buf, cap);
    if (!nb) {
        w->err = CFDB_WIRE_OUT_OF_MEMORY;
        return w->err;
    }
    w->buf = nb;
    w->cap = cap;
    return 0;
}

/* Room for `more` bytes; the writer's (positive) error once it has failed. */
static inline int reserve(fb_writer *w, size_t more)
{
    if (__builtin_expect(w->len + more <= w->cap && !w->err, 1))
        return 0;
    return grow(w, more);
}

/* Zeros n bytes at p in 8-byte stores, so up to 7 bytes past p + n too: the caller has
 * reserved them (bytes past len are free space, written again before they are used). */
static inline void zero_words(uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i += 8)
        memset(p + i, 0, 8);
}

/* Pads with zeros so that the message-relative position (len - base + extra) is aligned
 * (align a power of two). */
static inline int pad_to(fb_writer *w, size_t extra, size_t align)
{
    size_t pad = (0 - (w->len - w->base + extra)) & (align - 1); /* < 8 */
    if (reserve(w, 8))
        return w->err;
    zero_words(w->buf + w->len, pad);
    w->len += pad;
    return 0;
}

static inline size_t put(fb_writer *w, const void *p, size_t n)
{
    if (reserve(w, n))
        return 0;
    size_t at = w->len;
    if (p)
        memcpy(w->buf + at, p, n);
    else
        memset(w->buf + at, 0, n);
    w->len += n;
    return at;
}

static void patch_u32(fb_writer *w, size_t at, uint32_t v)
{
    if (!w->err)
        memcpy(w->buf + at, &v, 4);
}

static void patch_offset(fb_writer *w, size_t slot, size_t target)
{
    patch_u32(w, slot, (uint32_t)(target - slot));
}

static size_t write_child(fb_writer *w, const fb_type *t, const void *obj);

static void write_inline_scalar(uint8_t *dst, const fb_type *t, const void *src)
{
    if (t->kind == FB_TAG) {
        const cfdb_tag *tag = src;
        memcpy(dst, &tag->id, 2);
        dst[2] = (uint8_t)tag->locality;
        dst[3] = 0;
    } else if (t->kind == FB_BOOL) {
        dst[0] = *(const bool *)src ? 1 : 0;
    } else {
        memcpy(dst, src, fb_inline_size(t));
    }
}

static inline size_t find_or_write_vtable(fb_writer *w, const fb_layout *l)
{
    for (unsigned i = 0; i < w->vt_count && i < 16; i++)
        if (w->vt_cache[i].layout == l)
            return w->vt_cache[i].pos;
    if (pad_to(w, 0, 2))
        return 0;
    size_t pos = put(w, l->vtable, l->vtable_bytes);
    w->vt_cache[w->vt_count % 16].layout = l;
    w->vt_cache[w->vt_count % 16].pos = pos;
    w->vt_count++;
    return pos;
}

static size_t write_table(fb_writer *w, const fb_type *t, const void *obj)
{
    const fb_layout *l = fb_layout_of(t);
    if (!l) {
        w->err = CFDB_WIRE_OUT_OF_MEMORY;
        return 0;
    }
    _Alignas(16) unsigned char tmp[FB_PRE_ENCODE_MAX];
    if (t->pre_encode && t->csize <= sizeof tmp) {
        t->pre_encode(obj, tmp);
        obj = tmp;
    }
    size_t vt = find_or_write_vtable(w, l);
    if (pad_to(w, 4, l->align) || reserve(w, (size_t)l->table_size + 8))
        return 0;
    size_t table = w->len;
    uint8_t *tp = w->buf + table;
    zero_words(tp, l->table_size);
    w->len += l->table_size;
    int32_t soff = (int32_t)(table - vt);
    memcpy(tp, &soff, 4);

    /* inline members first, as the layout says to move them; out-of-line children are
     * written after the table */
    for (uint32_t i = 0; i < t->nfields; i++) {
        const fb_member_pos *mp = &l->members[i];
        const unsigned char *src = (const unsigned char *)obj + t->fields[i].offset;
        uint8_t *dst = tp + mp->value;
        switch (mp->op) {
        case FB_OP_COPY:
            switch (mp->width) {
            case 1: memcpy(dst, src, 1); break;
            case 2: memcpy(dst, src, 2); break;
            case 4: memcpy(dst, src, 4); break;
            case 8: memcpy(dst, src, 8); break;
            default: memcpy(dst, src, mp->width); break;
            }
            break;
        case FB_OP_BOOL:
            dst[0] = *(const bool *)src ? 1 : 0;
            break;
        case FB_OP_TAG:
            write_inline_scalar(dst, t->fields[i].type, src);
            break;
        case FB_OP_UNION:
            tp[mp->tag] = *src <= t->fields[i].type->nalts ? *src : 0;
            break;
        default:
            break;
        }
    }
    for (uint32_t i = 0; l->nchildren && i < t->nfields; i++) {
        const fb_field *f = &t->fields[i];
        const fb_member_pos *mp = &l->members[i];
        const unsigned char *src = (const unsigned char *)obj + f->offset;
        if (mp->op < FB_OP_UNION)
            continue;
        const fb_type *ct = f->type;
        const void *cobj = src;
        if (ct->kind == FB_UNION) {
            uint8_t tag = *src;
            if (tag == 0 || tag > ct->nalts)
                continue;
            cobj = src + ct->alts[tag - 1].offset;
            ct = ct->alts[tag - 1].type;
        }
        size_t child = write_child(w, ct, cobj);
        if (w->err)
            return 0;
        patch_offset(w, table + mp->value, child);
    }
    return table;
}

static size_t write_empty_vector(fb_writer *w)
{
    /* FoundationDB shares one zero count among all empty strings and vectors because it
     * writes back to front; writing front to back, a shared one would sit behind later
     * slots, and offsets must point forward. Four bytes each is cheap. */
    if (pad_to(w, 0, 4))
        return 0;
    return put(w, NULL, 4);
}

static size_t write_bytes(fb_writer *w, cfdb_bytes b)
{
    if (b.len == 0)
        return write_empty_vector(w);
    if (pad_to(w, 0, 4))
        return 0;
    size_t at = put(w, &b.len, 4);
    put(w, b.ptr, b.len);
    pad_to(w, 0, 4);
    return at;
}

static size_t write_blob(fb_writer *w, const fb_type *t, const void *obj)
{
    uint32_t n = t->blob->size(obj);
    if (pad_to(w, 0, 4))
        return 0;
    size_t at = put(w, &n, 4);
    size_t data = put(w, NULL, n);
    if (w->err)
        return 0;
    t->blob->write(obj, w->buf + data);
    pad_to(w, 0, 4);
    return at;
}

static size_t write_vector(fb_writer *w, const fb_type *t, const void *obj)
{
    const cfdb_vec *v = obj;
    const fb_type *et = t->elem;
    if (v->count == 0)
        return write_empty_vector(w);
    if (fb_is_scalar(et)) {
        uint32_t esz = fb_inline_size(et), ealign = fb_inline_align(et);
        if (pad_to(w, 4, ealign < 4 ? 4 : ealign))
            return 0;
        size_t at = put(w, &v->count, 4);
        size_t data = put(w, NULL, (size_t)esz * v->count);
        if (w->err)
            return 0;
        for (uint32_t i = 0; i < v->count; i++)
            write_inline_scalar(w->buf + data + (size_t)i * esz, et,
                                (const unsigned char *)v->items + (size_t)i * et->csize);
        pad_to(w, 0, 4);
        return at;
    }
    if (pad_to(w, 0, 4))
        return 0;
    size_t at = put(w, &v->count, 4);
    size_t slots = put(w, NULL, (size_t)4 * v->count);
    for (uint32_t i = 0; i < v->count && !w->err; i++) {
        size_t child = write_child(w, et, (const unsigned char *)v->items + (size_t)i * et->csize);
        patch_offset(w, slots + (size_t)i * 4, child);
    }
    return at;
}

/* Writes an out-of-line object and returns its position (what a uoffset must reach). */
static size_t write_child(fb_writer *w, const fb_type *t, const void *obj)
{
    switch (t->kind) {
    case FB_BYTES:
        return write_bytes(w, *(const cfdb_bytes *)obj);
    case FB_BLOB:
        return write_blob(w, t, obj);
    case FB_TABLE:
        return write_table(w, t, obj);
    case FB_VECTOR:
        return write_vector(w, t, obj);
    case FB_UNION:
        /* unions nest only inside tables; a union directly in a union has no wire form */
        w->err = CFDB_WIRE_SERIALIZATION_FAILED;
        return 0;
    default: {
        /* a scalar union alternative: its raw bytes out of line */
        uint8_t raw[16];
        write_inline_scalar(raw, t, obj);
        if (pad_to(w, 0, fb_inline_align(t)))
            return 0;
        return put(w, raw, fb_inline_size(t));
    }
    }
}

/* The synthetic root tables: { item } and { ErrorOr tag, offset }. */
static const uint16_t root_vt_request[3] = { 6, 8, 4 };
static const uint16_t root_vt_reply[4] = { 8, 9, 8, 4 };

int fb_encode(fb_writer *w, const fb_message *m, const void *item, cfdb_reply_error error)
{
    fb_writer_reset(w, w->base);
    uint32_t header[2] = { 0, m->file_id };
    size_t head = put(w, header, 8);
    if (m->kind == FB_MSG_PLAIN) {
        size_t root = write_table(w, m->item, item);
        patch_offset(w, head, root);
    } else {
        bool reply = m->kind == FB_MSG_REPLY;
        size_t vt = put(w, reply ? (const void *)root_vt_reply : (const void *)root_vt_request,
                        reply ? sizeof root_vt_reply : sizeof root_vt_request);
        pad_to(w, 4, 4);
        size_t root = put(w, NULL, reply ? 12 : 8);
        if (w->err)
            return w->err;
        int32_t soff = (int32_t)(root - vt);
        memcpy(w->buf + root, &soff, 4);
        patch_offset(w, head, root);
        size_t child;
        if (reply && error) {
            w->buf[root + 8] = 1;
            uint16_t code = error;
            child = write_table(w, &fb_error_table, &code);
        } else {
            if (reply)
                w->buf[root + 8] = 2;
            child = write_table(w, m->item, item);
        }
        patch_offset(w, root + 4, child);
    }
    pad_to(w, 0, 8);
    return w->err;
}
