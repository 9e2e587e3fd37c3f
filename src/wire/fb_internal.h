/* Shared by the flat-buffer encoder, decoder and printer. */
#ifndef CFDB_FB_INTERNAL_H
#define CFDB_FB_INTERNAL_H

#include "fb.h"

/* Where each member of a table lives: positions are bytes from the table start
 * (the soffset), i.e. the values stored in the vtable. */
/* How the encoder and decoder move a member, decided once per table from its type. */
typedef enum fb_member_op {
    FB_OP_COPY,  /* a scalar stored as its `width` little-endian bytes, like its C value */
    FB_OP_BOOL,  /* a bool: one byte, 0 or 1 */
    FB_OP_TAG,   /* a cfdb_tag: u16 id, i8 locality, a zero byte */
    FB_OP_UNION, /* a u8 tag inline, the chosen alternative out of line */
    FB_OP_CHILD, /* a uoffset to an out-of-line object */
} fb_member_op;

typedef struct fb_member_pos {
    uint16_t slot;  /* vtable slot of the value (unions: of the offset; the tag is slot - 1) */
    uint16_t value; /* position of the value or offset */
    uint16_t tag;   /* unions: position of the u8 tag */
    uint8_t op;     /* fb_member_op */
    uint8_t width;  /* bytes of the inline value or offset */
} fb_member_pos;

typedef struct fb_layout {
    uint16_t nslots;
    uint16_t table_size; /* including the 4-byte soffset */
    uint16_t align;      /* table + 4 is aligned to this */
    uint16_t vtable_bytes;
    uint16_t nchildren;  /* members with an out-of-line part (FB_OP_UNION, FB_OP_CHILD) */
    uint16_t *vtable;    /* vtable_bytes / 2 entries, ready to copy to the wire */
    fb_member_pos members[];
} fb_layout;

const fb_layout *fb_layout_build(const fb_type *t);
/* The table's layout, built at first use (NULL: out of memory). */
static inline const fb_layout *fb_layout_of(const fb_type *t)
{
    const fb_layout *l = atomic_load_explicit(&((fb_type *)t)->layout, memory_order_acquire);
    return l ? l : fb_layout_build(t);
}

/* Wire size and alignment of a member stored inline in a table or vector. */
uint32_t fb_inline_size(const fb_type *t);
uint32_t fb_inline_align(const fb_type *t);

static inline bool fb_is_scalar(const fb_type *t)
{
    return t->kind <= FB_TAG;
}


/* Budget of decoded elements per message, proportional to its size, so that crafted
 * offsets that share one subtree many times cannot make decoding explode. */
#define FB_DECODE_WORK_PER_BYTE 4
#define FB_DECODE_WORK_MIN 4096

#endif
