/* SPDX-License-Identifier: Apache-2.0 */
/* The FoundationDB error codes cfdb's installed headers document (tuple.h, subspace.h,
 * directory.h, arena.h and cfdb/records/), as CFDB_ERR_<NAME>. The numbers and names
 * are FoundationDB 7.3's; fdb_get_error() (<foundationdb/fdb_c.h>) gives the description
 * of any code, and fdb_error_predicate() its class. Every function of the layers returns
 * 0 on success or one of these codes (or a code passed through from libfdb_c). */
#ifndef CFDB_PUBLIC_ERRORS_H
#define CFDB_PUBLIC_ERRORS_H

#ifdef __cplusplus
extern "C" {
#endif

enum cfdb_public_error_code {
    CFDB_ERR_SERIALIZATION_FAILED                       = 1044,
    CFDB_ERR_UNSUPPORTED_FORMAT_VERSION                 = 1058,
    CFDB_ERR_CLIENT_INVALID_OPERATION                   = 2000,
    CFDB_ERR_KEY_NOT_TUPLE                              = 2041,
    CFDB_ERR_KEY_TOO_LARGE                              = 2102,
    CFDB_ERR_VALUE_TOO_LARGE                            = 2103,
    CFDB_ERR_UNSUPPORTED_OPERATION                      = 2108,
    CFDB_ERR_INVALID_TUPLE_DATA_TYPE                    = 2250,
    CFDB_ERR_INVALID_TUPLE_INDEX                        = 2251,
    CFDB_ERR_KEY_NOT_IN_SUBSPACE                        = 2252,
    CFDB_ERR_MANUAL_PREFIXES_NOT_ENABLED                = 2253,
    CFDB_ERR_PREFIX_IN_PARTITION                        = 2254,
    CFDB_ERR_CANNOT_OPEN_ROOT_DIRECTORY                 = 2255,
    CFDB_ERR_DIRECTORY_ALREADY_EXISTS                   = 2256,
    CFDB_ERR_DIRECTORY_DOES_NOT_EXIST                   = 2257,
    CFDB_ERR_PARENT_DIRECTORY_DOES_NOT_EXIST            = 2258,
    CFDB_ERR_MISMATCHED_LAYER                           = 2259,
    CFDB_ERR_INVALID_DIRECTORY_LAYER_METADATA           = 2260,
    CFDB_ERR_CANNOT_MOVE_DIRECTORY_BETWEEN_PARTITIONS   = 2261,
    CFDB_ERR_CANNOT_USE_PARTITION_AS_SUBSPACE           = 2262,
    CFDB_ERR_INCOMPATIBLE_DIRECTORY_VERSION             = 2263,
    CFDB_ERR_DIRECTORY_PREFIX_NOT_EMPTY                 = 2264,
    CFDB_ERR_DIRECTORY_PREFIX_IN_USE                    = 2265,
    CFDB_ERR_INVALID_DESTINATION_DIRECTORY              = 2266,
    CFDB_ERR_CANNOT_MODIFY_ROOT_DIRECTORY               = 2267,
    CFDB_ERR_UNKNOWN_ERROR                              = 4000,
    CFDB_ERR_INTERNAL_ERROR                             = 4100,
};

/* Allocation failure. libfdb_c has no code of its own for it: a failed allocation is a
 * std::bad_alloc, "a C++ exception not of type Error", which the C API reports as
 * unknown_error (4000). cfdb's client and layers return this name for out of memory;
 * internal_error (4100) is kept for a broken internal invariant. */
#define CFDB_ERR_OUT_OF_MEMORY CFDB_ERR_UNKNOWN_ERROR

#ifdef __cplusplus
}
#endif

#endif /* CFDB_PUBLIC_ERRORS_H */
