#include "cfdb/arena.h"

#include <stdlib.h>
#include <string.h>

#include "error_codes.h"

struct cfdb_arena_block {
    cfdb_arena_block *next;
    size_t size;               /* usable bytes in data[] */
    _Alignas(16) unsigned char data[];
};

enum { ARENA_MIN_BLOCK = 4096 - sizeof(cfdb_arena_block), ARENA_MAX_ALLOC = (size_t)1 << 31 };

void cfdb_arena_init(cfdb_arena *a)
{
    memset(a, 0, sizeof *a);
}

void cfdb_arena_init_with(cfdb_arena *a, void *mem, size_t size)
{
    cfdb_arena_init(a);
    uintptr_t p = ((uintptr_t)mem + 15) & ~(uintptr_t)15;
    size_t lost = p - (uintptr_t)mem;
    if (size < lost + sizeof(cfdb_arena_block) + 64)
        return;
    cfdb_arena_block *b = (cfdb_arena_block *)p;
    b->next = NULL;
    b->size = size - lost - sizeof(cfdb_arena_block);
    a->head = a->inline_block = b;
}

static cfdb_arena_block *new_block(size_t want)
{
    size_t size = want < ARENA_MIN_BLOCK ? ARENA_MIN_BLOCK : want;
    cfdb_arena_block *b = malloc(sizeof(cfdb_arena_block) + size);
    if (!b)
        return NULL;
    b->size = size;
    b->next = NULL;
    return b;
}

void *cfdb_arena_alloc(cfdb_arena *a, size_t size)
{
    if (size > ARENA_MAX_ALLOC)
        return NULL;
    size = (size + 7) & ~(size_t)7;
    if (!a->head || a->used + size > a->head->size) {
        /* Grow geometrically so that many small allocations cost few mallocs. */
        size_t want = size;
        if (a->head && a->head->size * 2 > want && a->head->size < ((size_t)1 << 20))
            want = a->head->size * 2;
        cfdb_arena_block *b = new_block(want);
        if (!b)
            return NULL;
        b->next = a->head;
        a->head = b;
        a->used = 0;
    }
    void *p = a->head->data + a->used;
    a->used += size;
    a->total += size;
    return p;
}

void *cfdb_arena_zalloc(cfdb_arena *a, size_t size)
{
    void *p = cfdb_arena_alloc(a, size);
    if (p && size)
        memset(p, 0, size);
    return p;
}

void *cfdb_arena_dup(cfdb_arena *a, const void *src, size_t size)
{
    void *p = cfdb_arena_alloc(a, size ? size : 1);
    if (p && size)
        memcpy(p, src, size);
    return p;
}

int cfdb_arena_dup_bytes(cfdb_arena *a, cfdb_bytes in, cfdb_bytes *out)
{
    if (in.len == 0) {
        *out = (cfdb_bytes){ (const uint8_t *)"", 0 };
        return 0;
    }
    void *p = cfdb_arena_dup(a, in.ptr, in.len);
    if (!p)
        return CFDB_ERR_UNKNOWN_ERROR; /* out of memory */
    *out = cfdb_bytes_make(p, in.len);
    return 0;
}

static void free_chain(cfdb_arena *a, cfdb_arena_block *b)
{
    while (b) {
        cfdb_arena_block *next = b->next;
        if (b != a->inline_block)
            free(b);
        b = next;
    }
}

void cfdb_arena_reset(cfdb_arena *a)
{
    if (!a->head)
        return;
    /* Keep the newest block: blocks grow geometrically, so it is the largest, and the
     * next user of this arena then needs no malloc for as much again. */
    cfdb_arena_block *keep = a->head, *b = keep->next;
    while (b) {
        cfdb_arena_block *next = b->next;
        if (b != a->inline_block)
            free(b);
        b = next;
    }
    keep->next = NULL;
    if (keep != a->inline_block)
        a->inline_block = NULL;
    a->used = 0;
    a->total = 0;
}

void cfdb_arena_free(cfdb_arena *a)
{
    free_chain(a, a->head);
    memset(a, 0, sizeof *a);
}

size_t cfdb_arena_block_capacity(const cfdb_arena *a)
{
    return a->head ? a->head->size : 0;
}
