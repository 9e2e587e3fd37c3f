/* Mutation types as numbered on the wire (MutationRef::Type in FoundationDB 7.3),
 * and the plain mutation record that commit paths pass around. */
#ifndef CFDB_MUTATION_H
#define CFDB_MUTATION_H

#include <stdbool.h>
#include <stdint.h>

#include "cfdb/bytes.h"

enum cfdb_mutation_type {
    CFDB_MUTATION_SET_VALUE = 0,
    CFDB_MUTATION_CLEAR_RANGE = 1,
    CFDB_MUTATION_ADD_VALUE = 2,
    CFDB_MUTATION_DEBUG_KEY_RANGE = 3,
    CFDB_MUTATION_DEBUG_KEY = 4,
    CFDB_MUTATION_NO_OP = 5,
    CFDB_MUTATION_AND = 6, /* legacy: absent existing value acts as zeros */
    CFDB_MUTATION_OR = 7,
    CFDB_MUTATION_XOR = 8,
    CFDB_MUTATION_APPEND_IF_FITS = 9,
    CFDB_MUTATION_AVAILABLE_FOR_REUSE = 10,
    CFDB_MUTATION_RESERVED_FOR_LOG_PROTOCOL_MESSAGE = 11,
    CFDB_MUTATION_MAX = 12,
    CFDB_MUTATION_MIN = 13, /* legacy: absent existing value acts as zero */
    CFDB_MUTATION_SET_VERSIONSTAMPED_KEY = 14,
    CFDB_MUTATION_SET_VERSIONSTAMPED_VALUE = 15,
    CFDB_MUTATION_BYTE_MIN = 16,
    CFDB_MUTATION_BYTE_MAX = 17,
    CFDB_MUTATION_MIN_V2 = 18,
    CFDB_MUTATION_AND_V2 = 19,
    CFDB_MUTATION_COMPARE_AND_CLEAR = 20,
    CFDB_MUTATION_RESERVED_FOR_SPAN_CONTEXT_MESSAGE = 21,
    CFDB_MUTATION_RESERVED_FOR_OTEL_SPAN_CONTEXT_MESSAGE = 22,
    CFDB_MUTATION_ENCRYPTED = 23,
    CFDB_MUTATION_MAX_ATOMIC_OP = 24, /* sentinel: valid types are below this */
};

/* The atomic operations (FoundationDB's ATOMIC_MASK): single-key mutations whose
 * result depends on the value already stored. */
#define CFDB_MUTATION_ATOMIC_MASK                                                              \
    ((1u << CFDB_MUTATION_ADD_VALUE) | (1u << CFDB_MUTATION_AND) | (1u << CFDB_MUTATION_OR) |  \
     (1u << CFDB_MUTATION_XOR) | (1u << CFDB_MUTATION_APPEND_IF_FITS) |                        \
     (1u << CFDB_MUTATION_MAX) | (1u << CFDB_MUTATION_MIN) |                                   \
     (1u << CFDB_MUTATION_SET_VERSIONSTAMPED_KEY) |                                            \
     (1u << CFDB_MUTATION_SET_VERSIONSTAMPED_VALUE) | (1u << CFDB_MUTATION_BYTE_MIN) |         \
     (1u << CFDB_MUTATION_BYTE_MAX) | (1u << CFDB_MUTATION_MIN_V2) |                           \
     (1u << CFDB_MUTATION_AND_V2) | (1u << CFDB_MUTATION_COMPARE_AND_CLEAR))

static inline bool cfdb_mutation_is_atomic(int type)
{
    return type >= 0 && type < CFDB_MUTATION_MAX_ATOMIC_OP &&
           ((CFDB_MUTATION_ATOMIC_MASK >> type) & 1u);
}

/* SetValue or an atomic op: param1 is a single key. */
static inline bool cfdb_mutation_is_single_key(int type)
{
    return type == CFDB_MUTATION_SET_VALUE || cfdb_mutation_is_atomic(type);
}

/* param1/param2 as on the wire: key/value, begin/end (ClearRange) or key/operand. */
typedef struct cfdb_mutation {
    int type;
    cfdb_bytes param1;
    cfdb_bytes param2;
} cfdb_mutation;

#endif
