/* Mutation types as numbered on the wire (MutationRef::Type in FoundationDB 7.3),
 * and the mutation record (MutationRef) that commit paths pass around. */
#ifndef CFDB_MUTATION_H
#define CFDB_MUTATION_H

#include <stdbool.h>
#include <stdint.h>

#include "cfdb/bytes.h"

enum cfdb_mutation_type {
    CFDB_MUT_SET_VALUE = 0,
    CFDB_MUT_CLEAR_RANGE = 1,
    CFDB_MUT_ADD_VALUE = 2,
    CFDB_MUT_DEBUG_KEY_RANGE = 3,
    CFDB_MUT_DEBUG_KEY = 4,
    CFDB_MUT_NO_OP = 5,
    CFDB_MUT_AND = 6, /* legacy: absent existing value acts as zeros */
    CFDB_MUT_OR = 7,
    CFDB_MUT_XOR = 8,
    CFDB_MUT_APPEND_IF_FITS = 9,
    CFDB_MUT_AVAILABLE_FOR_REUSE = 10,
    CFDB_MUT_RESERVED_FOR_LOG_PROTOCOL_MESSAGE = 11,
    CFDB_MUT_MAX = 12,
    CFDB_MUT_MIN = 13, /* legacy: absent existing value acts as zero */
    CFDB_MUT_SET_VERSIONSTAMPED_KEY = 14,
    CFDB_MUT_SET_VERSIONSTAMPED_VALUE = 15,
    CFDB_MUT_BYTE_MIN = 16,
    CFDB_MUT_BYTE_MAX = 17,
    CFDB_MUT_MIN_V2 = 18,
    CFDB_MUT_AND_V2 = 19,
    CFDB_MUT_COMPARE_AND_CLEAR = 20,
    CFDB_MUT_RESERVED_FOR_SPAN_CONTEXT_MESSAGE = 21,
    CFDB_MUT_RESERVED_FOR_OTEL_SPAN_CONTEXT_MESSAGE = 22,
    CFDB_MUT_ENCRYPTED = 23,
    CFDB_MUT_MAX_ATOMIC_OP = 24, /* sentinel: valid types are below this */
};

/* param1/param2 as on the wire: key/value, begin/end (ClearRange) or key/operand. */
typedef struct cfdb_mutation {
    uint8_t type; /* enum cfdb_mutation_type */
    cfdb_bytes param1;
    cfdb_bytes param2;
} cfdb_mutation;

/* The atomic operations (FoundationDB's ATOMIC_MASK): single-key mutations whose
 * result depends on the value already stored. */
#define CFDB_MUT_ATOMIC_MASK                                                              \
    ((1u << CFDB_MUT_ADD_VALUE) | (1u << CFDB_MUT_AND) | (1u << CFDB_MUT_OR) |                 \
     (1u << CFDB_MUT_XOR) | (1u << CFDB_MUT_APPEND_IF_FITS) | (1u << CFDB_MUT_MAX) |           \
     (1u << CFDB_MUT_MIN) | (1u << CFDB_MUT_SET_VERSIONSTAMPED_KEY) |                          \
     (1u << CFDB_MUT_SET_VERSIONSTAMPED_VALUE) | (1u << CFDB_MUT_BYTE_MIN) |                   \
     (1u << CFDB_MUT_BYTE_MAX) | (1u << CFDB_MUT_MIN_V2) | (1u << CFDB_MUT_AND_V2) |           \
     (1u << CFDB_MUT_COMPARE_AND_CLEAR))

static inline bool cfdb_mutation_is_atomic(int type)
{
    return type >= 0 && type < CFDB_MUT_MAX_ATOMIC_OP &&
           ((CFDB_MUT_ATOMIC_MASK >> type) & 1u);
}

/* SetValue or an atomic op: param1 is a single key. */
static inline bool cfdb_mutation_is_single_key(int type)
{
    return type == CFDB_MUT_SET_VALUE || cfdb_mutation_is_atomic(type);
}

#endif
