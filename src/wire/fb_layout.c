/* Table layouts: which vtable slot and inline position each member gets.
 * FoundationDB's rule (generate_vtable): members take slots in serialization order (unions
 * two: tag then offset); inline positions are assigned by size, largest first, ties in
 * member order, each at the next offset aligned to its own alignment. The layout also
 * records, per member, how the encoder and decoder move it (fb_member_op: copy so many
 * bytes, bool, tag, union, out-of-line child), so they do not dispatch on types per field. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "fb_internal.h"

uint32_t fb_inline_size(const fb_type *t)
{
    switch (t->kind) {
    case FB_BOOL: case FB_U8: case FB_I8: return 1;
    case FB_U16: case FB_I16: return 2;
    case FB_U32: case FB_I32: return 4;
    case FB_U64: case FB_I64: case FB_F64: return 8;
    case FB_UID: return 16;
    case FB_TAG: return 4;
    default: return 4; /* a uoffset */
    }
}

uint32_t fb_inline_align(const fb_type *t)
{
    switch (t->kind) {
    case FB_UID: return 8;
    case FB_TAG: return 2;
    default: return fb_inline_size(t);
    }
}

typedef struct slot_info {
    uint16_t slot;
    uint16_t member;
    uint8_t is_tag;
    uint8_t size;
    uint8_t align;
} slot_info;

static int by_size_desc(const void *a, const void *b)
{
    const slot_info *x = a, *y = b;
    if (x->size != y->size)
        return x->size > y->size ? -1 : 1;
    return x->slot < y->slot ? -1 : (x->slot > y->slot); /* stable: keep slot order */
}

static fb_layout *build_layout(const fb_type *t)
{
    uint32_t n = t->nfields, nslots = 0;
    for (uint32_t i = 0; i < n; i++)
        nslots += t->fields[i].type->kind == FB_UNION ? 2 : 1;

    slot_info *slots = calloc(nslots ? nslots : 1, sizeof *slots);
    fb_layout *l = calloc(1, sizeof *l + n * sizeof(fb_member_pos) + (2 + nslots) * sizeof(uint16_t));
    if (!slots || !l) {
        free(slots);
        free(l);
        return NULL;
    }
    l->vtable = (uint16_t *)(l->members + n);

    uint16_t s = 0;
    for (uint32_t i = 0; i < n; i++) {
        const fb_type *ft = t->fields[i].type;
        if (ft->kind == FB_UNION) {
            slots[s] = (slot_info){ s, (uint16_t)i, 1, 1, 1 };
            s++;
            slots[s] = (slot_info){ s, (uint16_t)i, 0, 4, 4 };
            s++;
        } else {
            slots[s] = (slot_info){ s, (uint16_t)i, 0, (uint8_t)fb_inline_size(ft), (uint8_t)fb_inline_align(ft) };
            s++;
        }
    }
    qsort(slots, nslots, sizeof *slots, by_size_desc);

    uint32_t end = 0, align = 4;
    for (uint32_t k = 0; k < nslots; k++) {
        slot_info *si = &slots[k];
        end = (end + si->align - 1) & ~(uint32_t)(si->align - 1);
        uint16_t pos = (uint16_t)(end + 4);
        l->vtable[2 + si->slot] = pos;
        fb_member_pos *mp = &l->members[si->member];
        if (si->is_tag) {
            mp->tag = pos;
        } else {
            mp->value = pos;
            mp->slot = si->slot;
            const fb_type *ft = t->fields[si->member].type;
            mp->width = si->size;
            mp->op = ft->kind == FB_UNION ? FB_OP_UNION
                     : !fb_is_scalar(ft)  ? FB_OP_CHILD
                     : ft->kind == FB_BOOL ? FB_OP_BOOL
                     : ft->kind == FB_TAG  ? FB_OP_TAG
                                           : FB_OP_COPY;
            if (mp->op >= FB_OP_UNION)
                l->nchildren++;
        }
        end += si->size;
        if (si->align > align)
            align = si->align;
    }
    free(slots);
    l->nslots = (uint16_t)nslots;
    l->table_size = (uint16_t)(end + 4);
    l->align = (uint16_t)align;
    l->vtable_bytes = (uint16_t)(4 + 2 * nslots);
    l->vtable[0] = l->vtable_bytes;
    l->vtable[1] = l->table_size;
    return l;
}

const fb_layout *fb_layout_build(const fb_type *t)
{
    fb_type *mt = (fb_type *)t;
    fb_layout *fresh = build_layout(t);
    if (!fresh)
        return NULL;
    fb_layout *expected = NULL;
    if (!atomic_compare_exchange_strong_explicit(&mt->layout, &expected, fresh, memory_order_acq_rel,
                                                 memory_order_acquire)) {
        free(fresh); /* another thread won; layouts are identical */
        return expected;
    }
    return fresh;
}
