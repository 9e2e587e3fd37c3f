#include "omap.h"

#include <stdlib.h>
#include <string.h>

#include "error_codes.h"

static cfdb_omap_node *node_alloc(cfdb_omap *m, int level, cfdb_bytes key)
{
    size_t sz = sizeof(cfdb_omap_node) + (size_t)level * sizeof(cfdb_omap_node *);
    cfdb_omap_node *n;
    if (m->arena)
        n = cfdb_arena_alloc(m->arena, sz + key.len);
    else
        n = malloc(sz + key.len);
    if (!n)
        return NULL;
    memset(n, 0, sz);
    n->level = level;
    uint8_t *kp = (uint8_t *)n + sz;
    if (key.len)
        memcpy(kp, key.ptr, key.len);
    n->key.ptr = kp;
    n->key.len = key.len;
    return n;
}

int cfdb_omap_init(cfdb_omap *m, cfdb_arena *arena)
{
    memset(m, 0, sizeof *m);
    m->arena = arena;
    m->rng = 0x9E3779B97F4A7C15ull ^ (uint64_t)(uintptr_t)m;
    m->head = node_alloc(m, CFDB_OMAP_MAX_LEVEL, (cfdb_bytes){ NULL, 0 });
    if (!m->head)
        return CFDB_ERR_UNKNOWN_ERROR;
    m->level = 1;
    return 0;
}

void cfdb_omap_clear(cfdb_omap *m)
{
    if (!m->head)
        return;
    if (!m->arena) {
        cfdb_omap_node *n = m->head->next[0];
        while (n) {
            cfdb_omap_node *nx = n->next[0];
            free(n);
            n = nx;
        }
    }
    for (int i = 0; i < CFDB_OMAP_MAX_LEVEL; i++)
        m->head->next[i] = NULL;
    m->level = 1;
    m->count = 0;
}

void cfdb_omap_destroy(cfdb_omap *m)
{
    if (!m->head)
        return;
    cfdb_omap_clear(m);
    if (!m->arena)
        free(m->head);
    m->head = NULL;
}

static int random_level(cfdb_omap *m)
{
    uint64_t x = m->rng;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    m->rng = x;
    int lvl = 1;
    while (lvl < CFDB_OMAP_MAX_LEVEL && (x & 3) == 0) {
        lvl++;
        x >>= 2;
    }
    return lvl;
}

/* Fills update[] with, per level, the last node whose key is < key (or <= key when inclusive). */
static cfdb_omap_node *descend(const cfdb_omap *m, cfdb_bytes key, bool inclusive, cfdb_omap_node **update)
{
    cfdb_omap_node *x = m->head;
    for (int i = m->level - 1; i >= 0; i--) {
        for (;;) {
            cfdb_omap_node *nx = x->next[i];
            if (!nx)
                break;
            int c = cfdb_omap_key_cmp(nx->key, key);
            if (c < 0 || (inclusive && c == 0))
                x = nx;
            else
                break;
        }
        if (update)
            update[i] = x;
    }
    return x;
}

cfdb_omap_node *cfdb_omap_last(const cfdb_omap *m)
{
    cfdb_omap_node *x = m->head;
    for (int i = m->level - 1; i >= 0; i--)
        while (x->next[i])
            x = x->next[i];
    return x == m->head ? NULL : x;
}

cfdb_omap_node *cfdb_omap_find_ge(const cfdb_omap *m, cfdb_bytes key)
{
    return descend(m, key, false, NULL)->next[0];
}

cfdb_omap_node *cfdb_omap_find_gt(const cfdb_omap *m, cfdb_bytes key)
{
    return descend(m, key, true, NULL)->next[0];
}

cfdb_omap_node *cfdb_omap_find_lt(const cfdb_omap *m, cfdb_bytes key)
{
    cfdb_omap_node *x = descend(m, key, false, NULL);
    return x == m->head ? NULL : x;
}

cfdb_omap_node *cfdb_omap_find_le(const cfdb_omap *m, cfdb_bytes key)
{
    cfdb_omap_node *x = descend(m, key, true, NULL);
    return x == m->head ? NULL : x;
}

cfdb_omap_node *cfdb_omap_find(const cfdb_omap *m, cfdb_bytes key)
{
    cfdb_omap_node *n = cfdb_omap_find_ge(m, key);
    return (n && cfdb_bytes_eq(n->key, key)) ? n : NULL;
}

cfdb_omap_node *cfdb_omap_insert(cfdb_omap *m, cfdb_bytes key, bool *created)
{
    cfdb_omap_node *update[CFDB_OMAP_MAX_LEVEL];
    cfdb_omap_node *x = descend(m, key, false, update)->next[0];
    if (x && cfdb_bytes_eq(x->key, key)) {
        if (created)
            *created = false;
        return x;
    }
    int lvl = random_level(m);
    if (lvl > m->level) {
        for (int i = m->level; i < lvl; i++)
            update[i] = m->head;
        m->level = lvl;
    }
    cfdb_omap_node *n = node_alloc(m, lvl, key);
    if (!n)
        return NULL;
    for (int i = 0; i < lvl; i++) {
        n->next[i] = update[i]->next[i];
        update[i]->next[i] = n;
    }
    m->count++;
    if (created)
        *created = true;
    return n;
}

bool cfdb_omap_remove(cfdb_omap *m, cfdb_bytes key)
{
    cfdb_omap_node *update[CFDB_OMAP_MAX_LEVEL];
    cfdb_omap_node *x = descend(m, key, false, update)->next[0];
    if (!x || !cfdb_bytes_eq(x->key, key))
        return false;
    for (int i = 0; i < x->level; i++)
        if (update[i]->next[i] == x)
            update[i]->next[i] = x->next[i];
    while (m->level > 1 && !m->head->next[m->level - 1])
        m->level--;
    m->count--;
    if (!m->arena)
        free(x);
    return true;
}
