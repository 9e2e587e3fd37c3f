/* The FoundationDB error codes the wire layer itself produces (flow/error_definitions.h).
 * Functions return 0 on success and the positive code on failure (fb_encode, fb_decode and
 * its field hooks in msg_types.c included). */
#ifndef CFDB_WIRE_ERRORS_H
#define CFDB_WIRE_ERRORS_H

#define CFDB_WIRE_CONNECTION_FAILED        1026
#define CFDB_WIRE_SERIALIZATION_FAILED     1044 /* malformed or truncated message */
#define CFDB_WIRE_PLATFORM_ERROR           1500 /* FDB's answer to an impossible frame length */
#define CFDB_WIRE_CHECKSUM_FAILED          1520
#define CFDB_WIRE_INCOMPATIBLE_PROTOCOL    2100
#define CFDB_WIRE_CONNECTION_STRING_INVALID 2104
/* Out of memory: unknown_error, as libfdb_c reports a failed allocation (std::bad_alloc is
 * "a C++ exception not of type Error"); the same code as errors.h's CFDB_ERR_OUT_OF_MEMORY. */
#define CFDB_WIRE_OUT_OF_MEMORY            4000

#endif
