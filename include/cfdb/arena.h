/* Arena: a bump allocator whose memory is released all at once.
 * One per transaction or reply; nothing inside is freed individually. */
#ifndef CFDB_ARENA_H
#define CFDB_ARENA_H

#include <stddef.h>
#include <stdint.h>

#include "cfdb/bytes.h"
#include "cfdb/errors.h"

/* What this header declares is the shared library's exported API (the library is built
 * with hidden visibility; everything not declared in an installed header stays inside). */
#pragma GCC visibility push(default)

typedef struct cfdb_arena_block cfdb_arena_block;

typedef struct cfdb_arena {
    cfdb_arena_block *head;   /* current block; older blocks chain behind it */
    size_t used;              /* bytes used in head */
    size_t total;             /* bytes handed out over the arena's life, for accounting */
    /* An optional first block owned by the caller (e.g. on the stack), never freed. */
    cfdb_arena_block *inline_block;
} cfdb_arena;

void cfdb_arena_init(cfdb_arena *a);
/* Use caller memory as the first block; it must outlive the arena's use. */
void cfdb_arena_init_with(cfdb_arena *a, void *mem, size_t size);
/* Returns 8-byte-aligned memory or NULL when out of memory (or size absurd). */
void *cfdb_arena_alloc(cfdb_arena *a, size_t size);
void *cfdb_arena_zalloc(cfdb_arena *a, size_t size);
void *cfdb_arena_dup(cfdb_arena *a, const void *p, size_t size);
/* Copies bytes into the arena; an empty input gives an empty result. Returns 0 or
 * CFDB_ERR_UNKNOWN_ERROR (4000, out of memory). */
int cfdb_arena_dup_bytes(cfdb_arena *a, cfdb_bytes in, cfdb_bytes *out);
/* Frees every block but the first and rewinds: memory is reused by the next user. */
void cfdb_arena_reset(cfdb_arena *a);
/* Usable bytes of the current block (what a reset arena keeps). */
size_t cfdb_arena_block_capacity(const cfdb_arena *a);
void cfdb_arena_free(cfdb_arena *a);

#pragma GCC visibility pop

#endif
