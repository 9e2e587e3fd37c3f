/* Tuple-element scanning and mapped-key construction. */
#include "mapper.h"

#include <stdlib.h>
#include <string.h>

#include "error_codes.h"

static uint32_t bytes_elem_len(const uint8_t *p, uint32_t n)
{
    /* type byte, then bytes with 00 escaped as 00 ff, ended by a lone 00 */
    for (uint32_t i = 1; i < n; i++) {
        if (p[i] == 0) {
            if (i + 1 < n && p[i + 1] == 0xff) {
                i++;
                continue;
            }
            return i + 1;
        }
    }
    return 0;
}

uint32_t srv_tuple_element_len(const uint8_t *p, uint32_t n)
{
    if (n == 0)
        return 0;
    uint8_t t = p[0];
    uint32_t need;
    if (t == 0x00)
        return 1;
    if (t == 0x01 || t == 0x02)
        return bytes_elem_len(p, n);
    if (t == 0x05) { /* nested: elements until a lone 00; a nested null is 00 ff */
        uint32_t i = 1;
        while (i < n) {
            if (p[i] == 0) {
                if (i + 1 < n && p[i + 1] == 0xff) {
                    i += 2;
                    continue;
                }
                return i + 1;
            }
            uint32_t l = srv_tuple_element_len(p + i, n - i);
            if (!l)
                return 0;
            i += l;
        }
        return 0;
    }
    if (t >= 0x0c && t <= 0x1c) {
        need = 1u + (uint32_t)(t > 0x14 ? t - 0x14 : 0x14 - t);
    } else if (t == 0x1d || t == 0x0b) {
        if (n < 2)
            return 0;
        need = 2u + (t == 0x1d ? p[1] : (uint8_t)~p[1]);
    } else if (t == 0x20) {
        need = 5;
    } else if (t == 0x21) {
        need = 9;
    } else if (t == 0x26 || t == 0x27) {
        need = 1;
    } else if (t == 0x30) {
        need = 17;
    } else if (t == 0x33) {
        need = 13;
    } else {
        return 0;
    }
    return need <= n ? need : 0;
}

/* Splits a tuple into element offsets (*count of them); false if malformed. */
static bool split_tuple(cfdb_bytes t, uint32_t *offs, uint32_t *lens, int max, int *count)
{
    int k = 0;
    uint32_t i = 0;
    while (i < t.len) {
        uint32_t l = srv_tuple_element_len(t.ptr + i, t.len - i);
        if (!l || k >= max)
            return false;
        offs[k] = i;
        lens[k] = l;
        k++;
        i += l;
    }
    *count = k;
    return true;
}

#define MAX_ELEMS 256

typedef struct buf {
    uint8_t *p;
    uint32_t len, cap;
} buf;

static int put(buf *b, const void *d, uint32_t n)
{
    if (b->len + n > b->cap) {
        uint32_t nc = (b->cap ? b->cap * 2 : 64) + n;
        uint8_t *np = realloc(b->p, nc);
        if (!np)
            return CFDB_ERR_UNKNOWN_ERROR; /* out of memory */
        b->p = np;
        b->cap = nc;
    }
    memcpy(b->p + b->len, d, n);
    b->len += n;
    return 0;
}

/* The string inside a bytes/unicode element, unescaped, into tmp. */
static uint32_t elem_string(const uint8_t *e, uint32_t l, uint8_t *tmp)
{
    uint32_t o = 0;
    for (uint32_t i = 1; i + 1 < l; i++) {
        tmp[o++] = e[i];
        if (e[i] == 0)
            i++; /* skip the ff */
    }
    return o;
}

static int parse_ref(const uint8_t *s, uint32_t n, char *which, int *index)
{
    /* {K[123]} */
    if (n < 6 || s[0] != '{' || (s[1] != 'K' && s[1] != 'V') || s[2] != '[' || s[n - 2] != ']' || s[n - 1] != '}')
        return 0;
    int v = 0;
    for (uint32_t i = 3; i < n - 2; i++) {
        if (s[i] < '0' || s[i] > '9' || v > 100000)
            return 0;
        v = v * 10 + (s[i] - '0');
    }
    *which = (char)s[1];
    *index = v;
    return 1;
}

int srv_map_key(cfdb_bytes mapper, cfdb_bytes key, cfdb_bytes value, cfdb_arena *a, cfdb_bytes *out,
                bool *is_range)
{
    uint32_t moffs[MAX_ELEMS], mlens[MAX_ELEMS];
    uint32_t koffs[MAX_ELEMS], klens[MAX_ELEMS], voffs[MAX_ELEMS], vlens[MAX_ELEMS];
    int nm;
    if (!split_tuple(mapper, moffs, mlens, MAX_ELEMS, &nm))
        return CFDB_ERR_MAPPER_NOT_TUPLE;
    int nk = 0, nv = 0; /* parsed lazily: */
    bool k_parsed = false, v_parsed = false, k_tuple = false, v_tuple = false;
    buf b = { 0 };
    int rc = 0;
    *is_range = false;
    uint8_t *tmp = malloc(mapper.len + 1);
    if (!tmp)
        return CFDB_ERR_UNKNOWN_ERROR; /* out of memory */
    for (int i = 0; i < nm && rc == 0; i++) {
        const uint8_t *e = mapper.ptr + moffs[i];
        uint32_t l = mlens[i];
        if (e[0] != 0x01 && e[0] != 0x02) {
            rc = put(&b, e, l);
            continue;
        }
        uint32_t sl = elem_string(e, l, tmp);
        char which;
        int idx;
        if (sl == 5 && memcmp(tmp, "{...}", 5) == 0) {
            if (i != nm - 1) {
                rc = CFDB_ERR_MAPPER_BAD_RANGE_DECRIPTOR;
                break;
            }
            *is_range = true;
            continue;
        }
        if (parse_ref(tmp, sl, &which, &idx)) {
            if (which == 'K') {
                if (!k_parsed) {
                    k_tuple = split_tuple(key, koffs, klens, MAX_ELEMS, &nk);
                    k_parsed = true;
                }
                if (!k_tuple) {
                    rc = CFDB_ERR_KEY_NOT_TUPLE;
                    break;
                }
                if (idx >= nk) {
                    rc = CFDB_ERR_MAPPER_BAD_INDEX;
                    break;
                }
                rc = put(&b, key.ptr + koffs[idx], klens[idx]);
            } else {
                if (!v_parsed) {
                    v_tuple = split_tuple(value, voffs, vlens, MAX_ELEMS, &nv);
                    v_parsed = true;
                }
                if (!v_tuple) {
                    rc = CFDB_ERR_VALUE_NOT_TUPLE;
                    break;
                }
                if (idx >= nv) {
                    rc = CFDB_ERR_MAPPER_BAD_INDEX;
                    break;
                }
                rc = put(&b, value.ptr + voffs[idx], vlens[idx]);
            }
            continue;
        }
        /* a literal string: unescape {{ and }}, re-encode with the same type */
        uint8_t ty = e[0];
        rc = put(&b, &ty, 1);
        for (uint32_t k = 0; k < sl && rc == 0; k++) {
            uint8_t ch = tmp[k];
            if ((ch == '{' || ch == '}') && k + 1 < sl && tmp[k + 1] == ch)
                k++;
            rc = put(&b, &ch, 1);
            if (rc == 0 && ch == 0)
                rc = put(&b, "\xff", 1);
        }
        if (rc == 0)
            rc = put(&b, "", 1);
    }
    free(tmp);
    if (rc == 0) {
        rc = cfdb_arena_dup_bytes(a, cfdb_bytes_make(b.p, b.len), out);
    }
    free(b.p);
    return rc;
}
