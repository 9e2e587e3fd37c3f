/* SPDX-License-Identifier: Apache-2.0 */
/* cfdb: opaque handle types and scalar typedefs of the FoundationDB C API.
 * Included by fdb_c.h; usable on its own by code that only passes handles. */
#ifndef FDB_C_TYPES_H
#define FDB_C_TYPES_H
#pragma once

#ifndef DLLEXPORT
#define DLLEXPORT
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Handles. Their contents are private to the library. */
typedef struct FDB_future FDBFuture;
typedef struct FDB_result FDBResult;
typedef struct FDB_cluster FDBCluster; /* only used by API versions < 610 */
typedef struct FDB_database FDBDatabase;
typedef struct FDB_tenant FDBTenant;
typedef struct FDB_transaction FDBTransaction;

/* 0 means success; anything else is an error code (see fdb_get_error). */
typedef int fdb_error_t;
/* 0 is false, anything else true. */
typedef int fdb_bool_t;

#ifdef __cplusplus
}
#endif
#endif /* FDB_C_TYPES_H */
