/* Shared by the flat-buffer encoder, decoder and printer. */
#ifndef CFDB_FB_INTERNAL_H
#define CFDB_FB_INTERNAL_H

#include "cfdb/fb.h"

/* Where each member of a table lives: positions are bytes from the table start
 * (the soffset), i.e. the values stored in the vtable. */
typedef struct fb_member_pos {
    uint16_t slot;  /* vtable slot of the value (unions: of the offset; the tag is slot - 1) */
    uint16_t value; /* position of the value or offset */
    uint16_t tag;   /* unions: position of the u8 tag */
} fb_member_pos;

typedef struct fb_layout {
    uint16_t nslots;
    uint16_t table_size; /* including the 4-byte soffset */
    uint16_t align;      /* table + 4 is aligned to this */
    uint16_t vtable_bytes;
    uint16_t *vtable;    /* vtable_bytes / 2 entries, ready to copy to the wire */
    fb_member_pos members[];
} fb_layout;

const fb_layout *fb_layout_of(const fb_type *t);

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
