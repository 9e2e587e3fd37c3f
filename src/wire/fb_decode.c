/* Flat-buffer decoder. Follows FoundationDB's reader rules (absent slots and unknown union
 * tags give defaults) but, unlike it, checks every offset, length and count against the
 * buffer: a malformed message yields 1044 serialization_failed, never a wild read. */
#include <string.h>

#include "wire_errors.h"
#include "fb_internal.h"

typedef struct fb_reader {
    const uint8_t *buf;
    size_t len;
    cfdb_arena *arena;
    size_t work; /* remaining element budget */
} fb_reader;

#define BAD CFDB_WIRE_SERIALIZATION_FAILED

static inline uint32_t rd_u32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

static inline uint16_t rd_u16(const uint8_t *p)
{
    uint16_t v;
    memcpy(&v, p, 2);
    return v;
}

static int spend(fb_reader *r, size_t n)
{
    if (r->work < n)
        return BAD;
    r->work -= n;
    return 0;
}

/* Follows the uoffset stored at `at` (already known to be inside the buffer). */
static int follow(const fb_reader *r, size_t at, size_t *target)
{
    uint64_t t = (uint64_t)at + rd_u32(r->buf + at);
    if (t >= r->len)
        return BAD;
    *target = (size_t)t;
    return 0;
}

static void read_inline_scalar(void *dst, const fb_type *t, const uint8_t *src)
{
    if (t->kind == FB_TAG) {
        cfdb_tag *tag = dst;
        memcpy(&tag->id, src, 2);
        tag->locality = (int8_t)src[2];
    } else if (t->kind == FB_BOOL) {
        *(bool *)dst = src[0] != 0;
    } else {
        memcpy(dst, src, fb_inline_size(t));
    }
}

static int read_object(fb_reader *r, const fb_type *t, size_t at, void *obj);

static int read_table(fb_reader *r, const fb_type *t, size_t at, void *obj)
{
    if (spend(r, 1))
        return BAD;
    if (at + 4 > r->len)
        return BAD;
    int32_t soff;
    memcpy(&soff, r->buf + at, 4);
    int64_t vt = (int64_t)at - soff;
    if (vt < 0 || (uint64_t)vt + 4 > r->len)
        return BAD;
    uint16_t vbytes = rd_u16(r->buf + vt), tsize = rd_u16(r->buf + vt + 2);
    if (vbytes < 4 || (vbytes & 1) || (uint64_t)vt + vbytes > r->len || tsize < 4 || at + tsize > r->len)
        return BAD;
    uint32_t nslots = (vbytes - 4u) / 2u;
    const fb_layout *l = t->nfields ? fb_layout_of(t) : NULL;
    if (t->nfields && !l)
        return CFDB_WIRE_OUT_OF_MEMORY;

    for (uint32_t i = 0; i < t->nfields; i++) {
        const fb_field *f = &t->fields[i];
        const fb_member_pos *mp = &l->members[i];
        unsigned char *dst = (unsigned char *)obj + f->offset;
        uint32_t slot = mp->slot;
        if (slot >= nslots)
            continue;
        uint16_t pos = rd_u16(r->buf + vt + 4 + 2 * slot);
        if (pos < 4)
            continue; /* absent: C default (zero) */
        if ((uint32_t)pos + mp->width > tsize)
            return BAD;
        size_t field = at + pos;
        const uint8_t *src = r->buf + field;
        switch (mp->op) {
        case FB_OP_COPY:
            switch (mp->width) {
            case 1: memcpy(dst, src, 1); continue;
            case 2: memcpy(dst, src, 2); continue;
            case 4: memcpy(dst, src, 4); continue;
            case 8: memcpy(dst, src, 8); continue;
            default: memcpy(dst, src, mp->width); continue;
            }
        case FB_OP_BOOL:
        case FB_OP_TAG:
            read_inline_scalar(dst, f->type, src);
            continue;
        default:
            break;
        }
        const fb_type *ct = f->type;
        void *cobj = dst;
        if (ct->kind == FB_UNION) {
            uint32_t tag_slot = slot - 1;
            if (tag_slot >= nslots)
                continue;
            uint16_t tpos = rd_u16(r->buf + vt + 4 + 2 * tag_slot);
            if (tpos < 4)
                continue;
            if ((uint32_t)tpos + 1 > tsize)
                return BAD;
            uint8_t tag = r->buf[at + tpos];
            if (tag == 0 || tag > ct->nalts)
                continue; /* FoundationDB default-constructs on unknown tags */
            *dst = tag;
            cobj = dst + ct->alts[tag - 1].offset;
            ct = ct->alts[tag - 1].type;
        }
        size_t target;
        if (follow(r, field, &target))
            return BAD;
        int rc = read_object(r, ct, target, cobj);
        if (rc)
            return rc;
    }
    return t->post_decode ? t->post_decode(obj) : 0;
}

static int read_length_prefixed(const fb_reader *r, size_t at, const uint8_t **data, uint32_t *n)
{
    if (at + 4 > r->len)
        return BAD;
    *n = rd_u32(r->buf + at);
    if (*n > r->len - at - 4)
        return BAD;
    *data = r->buf + at + 4;
    return 0;
}

static int read_vector(fb_reader *r, const fb_type *t, size_t at, cfdb_vec *v)
{
    const fb_type *et = t->elem;
    const uint8_t *data;
    uint32_t count;
    if (at + 4 > r->len)
        return BAD;
    count = rd_u32(r->buf + at);
    uint32_t wsize = fb_is_scalar(et) ? fb_inline_size(et) : 4;
    if ((uint64_t)count * wsize > r->len - at - 4)
        return BAD;
    data = r->buf + at + 4;
    v->count = count;
    v->items = NULL;
    if (count == 0)
        return 0;
    if (spend(r, count))
        return BAD;
    v->items = cfdb_arena_zalloc(r->arena, (size_t)count * et->csize);
    if (!v->items)
        return CFDB_WIRE_OUT_OF_MEMORY;
    for (uint32_t i = 0; i < count; i++) {
        unsigned char *dst = (unsigned char *)v->items + (size_t)i * et->csize;
        if (fb_is_scalar(et)) {
            read_inline_scalar(dst, et, data + (size_t)i * wsize);
        } else {
            size_t slot = (size_t)(data - r->buf) + (size_t)i * 4, target;
            if (follow(r, slot, &target))
                return BAD;
            int rc = read_object(r, et, target, dst);
            if (rc)
                return rc;
        }
    }
    return 0;
}

static int read_object(fb_reader *r, const fb_type *t, size_t at, void *obj)
{
    switch (t->kind) {
    case FB_BYTES: {
        const uint8_t *data;
        uint32_t n;
        if (read_length_prefixed(r, at, &data, &n))
            return BAD;
        *(cfdb_bytes *)obj = cfdb_bytes_make(data, n);
        return 0;
    }
    case FB_BLOB: {
        const uint8_t *data;
        uint32_t n;
        if (read_length_prefixed(r, at, &data, &n) || spend(r, 1))
            return BAD;
        return t->blob->read(data, n, obj, r->arena);
    }
    case FB_TABLE:
        return read_table(r, t, at, obj);
    case FB_VECTOR:
        return read_vector(r, t, at, obj);
    case FB_UNION:
        return BAD;
    default:
        /* scalar union alternative stored out of line */
        if (at + fb_inline_size(t) > r->len)
            return BAD;
        read_inline_scalar(obj, t, r->buf + at);
        return 0;
    }
}

uint32_t fb_peek_file_id(const uint8_t *buf, size_t len)
{
    return len >= 8 ? rd_u32(buf + 4) : 0;
}

int fb_decode(const fb_message *m, const uint8_t *buf, size_t len, void *item, cfdb_reply_error *error,
              cfdb_arena *a)
{
    fb_reader r = { buf, len, a, len * FB_DECODE_WORK_PER_BYTE + FB_DECODE_WORK_MIN };
    if (error)
        *error = 0;
    if (len < 8 || fb_peek_file_id(buf, len) != m->file_id)
        return BAD;
    size_t root;
    if (follow(&r, 0, &root))
        return BAD;
    if (m->kind == FB_MSG_PLAIN)
        return read_table(&r, m->item, root, item);

    /* The root wrapper: one member, the item (request) or ErrorOr<item> (reply). */
    if (root + 4 > len)
        return BAD;
    int32_t soff;
    memcpy(&soff, buf + root, 4);
    int64_t vt = (int64_t)root - soff;
    if (vt < 0 || (uint64_t)vt + 4 > len)
        return BAD;
    uint16_t vbytes = rd_u16(buf + vt), tsize = rd_u16(buf + vt + 2);
    if (vbytes < 4 || (uint64_t)vt + vbytes > len || tsize < 4 || root + tsize > len)
        return BAD;
    uint32_t nslots = (vbytes - 4u) / 2u;
    uint32_t off_slot = m->kind == FB_MSG_REPLY ? 1 : 0;
    if (nslots <= off_slot)
        return BAD; /* no item: nothing a peer could act on */
    uint16_t pos = rd_u16(buf + vt + 4 + 2 * off_slot);
    if (pos < 4 || (uint32_t)pos + 4 > tsize)
        return BAD;
    size_t target;
    if (follow(&r, root + pos, &target))
        return BAD;
    if (m->kind == FB_MSG_REPLY) {
        uint16_t tpos = rd_u16(buf + vt + 4);
        if (tpos < 4 || (uint32_t)tpos + 1 > tsize)
            return BAD;
        uint8_t tag = buf[root + tpos];
        if (tag == 1) {
            cfdb_error_value ev = { 0 };
            int rc = read_table(&r, &fb_error_table, target, &ev);
            if (rc)
                return rc;
            if (error)
                *error = ev.code ? ev.code : 0xFFFF; /* absent code: FDB's invalid_error_code */
            return 0;
        }
        if (tag != 2)
            return BAD;
    }
    return read_table(&r, m->item, target, item);
}
