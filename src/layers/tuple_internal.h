/* SPDX-License-Identifier: Apache-2.0 */
/* Shared between the tuple layer's files (src/layers/tuple*.c): the integer encoding
 * in one place, so that pack and compare can never disagree, and UTF-8 validation. */
#ifndef CFDB_LAYERS_TUPLE_INTERNAL_H
#define CFDB_LAYERS_TUPLE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cfdb/tuple.h"

/* Largest packed integer: code + length byte + 255 magnitude bytes. */
#define TUPLE_INT_MAX_ENCODED 257

/* Canonical encoding of an INT or BIGINT element into buf (>= TUPLE_INT_MAX_ENCODED
 * bytes); returns its length, or 0 when the magnitude is wider than 255 bytes. */
size_t tuple_encode_integer(const cfdb_tuple_elem *e, uint8_t *buf);

/* Appends *e as it is (its payload already lives in t's arena). */
int tuple_push_elem(cfdb_tuple *t, const cfdb_tuple_elem *e);

/* 1 when p[0..n) is well-formed UTF-8 (no overlong forms, no surrogates, <= U+10FFFF). */
bool tuple_utf8_valid(const uint8_t *p, size_t n);

/* Float/double bits transformed for order: negative -> all bits flipped, else sign flipped. */
uint32_t tuple_float_key(float f);
uint64_t tuple_double_key(double d);

#endif
