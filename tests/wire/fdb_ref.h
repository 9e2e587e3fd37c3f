/* An independent reader of the requests a FoundationDB 7.3 client sends.
 *
 * Test-side only and deliberately separate from cfdb's codec (src/wire): it does not include
 * or link anything from src/, and its message descriptions (fdb_ref.c) were written by hand
 * from the serialize() member lists of FoundationDB 7.3.77, each cited by file:line. It walks
 * a message's ObjectSerializer layout (root uoffset, soffset to vtable, slot offsets, forward
 * uoffsets) and turns it into a flat list of named fields:
 *
 *     reply.token = 59ccebfac644fc1ac7bae9120000001a
 *     key = x'672f68656c6c6f'
 *     begin.orEqual = false
 *     options = none
 *     @vt = 24,42,12,4,40,16,20,24,28,41,32,36        (per table: its vtable as read)
 *
 * so that two messages (a captured libfdb_c request and cfdb's) can be compared field by
 * field, whatever their byte placement. Every table's vtable is also checked against the one
 * FoundationDB's writer derives from the member list (ref_expected_vtable); a difference is
 * counted in ref_doc.vt_mismatch. */
#ifndef CFDB_TEST_FDB_REF_H
#define CFDB_TEST_FDB_REF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum ref_kind {
    REF_U8,
    REF_BOOL,
    REF_U16,
    REF_I32,
    REF_U32,
    REF_I64,
    REF_U64,
    REF_UID,    /* 16 bytes inline, alignment 8 */
    REF_BYTES,  /* u32 length + bytes; also every "dynamic size" blob (TagSet, VersionVector...) */
    REF_TABLE,
    REF_VECTOR,
    REF_UNION,  /* Optional / std::variant: two slots, u8 tag then u32 offset */
} ref_kind;

typedef struct ref_type ref_type;

typedef struct ref_field {
    const char *name;
    const ref_type *type;
} ref_field;

struct ref_type {
    const char *name;
    ref_kind kind;
    const ref_field *fields; /* REF_TABLE, in serialize() order (zero-size Arena members omitted) */
    unsigned nfields;
    const ref_type *elem;            /* REF_VECTOR */
    const ref_type *const *alts;     /* REF_UNION: alternative k is tag k+1 */
    unsigned nalts;
};

typedef struct ref_msg {
    const char *name;
    uint32_t file_id;
    const ref_type *type;
} ref_msg;

extern const ref_msg ref_ping_request, ref_protocol_info_request, ref_get_leader_request,
    ref_open_database_coord_request, ref_status_request, ref_global_config_refresh_request,
    ref_get_read_version_request, ref_get_key_server_locations_request, ref_commit_transaction_request,
    ref_get_tenant_id_request, ref_get_health_metrics_request, ref_expire_idempotency_id_request,
    ref_get_value_request, ref_get_key_request, ref_get_key_values_request,
    ref_get_mapped_key_values_request, ref_watch_value_request, ref_wait_metrics_request, ref_split_range_request;
extern const ref_type ref_t_span_context, ref_t_tenant_info, ref_t_reply_promise, ref_t_read_options,
    ref_t_key_selector, ref_t_key_range, ref_t_mutation, ref_t_commit_transaction_ref, ref_t_storage_metrics,
    ref_t_network_address, ref_t_ip_address, ref_t_client_version, ref_t_hostname, ref_t_wiped_string,
    ref_t_commit_cost_estimation, ref_t_tag_count_pair, ref_t_clear_idx_cost_pair;

/* Every request above; NULL-free array of ref_msg_count entries. */
extern const ref_msg *const ref_msgs[];
extern const unsigned ref_msg_count;

/* The request a file identifier names on a client's send path (6795746 is shared with the
 * stream and change-feed requests, which a 7.3 client does not send: GetKeyValuesRequest). */
const ref_msg *ref_msg_by_file_id(uint32_t file_id);
uint32_t ref_peek_file_id(const uint8_t *msg, size_t len);

/* The vtable FoundationDB's writer builds for a table type (generate_vtable in
 * flow/flat_buffers.cpp): slots in member order, each union as (u8 tag, u32 offset); fields
 * placed by size descending (stable), each aligned to its size (max 8) from table+4.
 * Writes {vtable bytes, table bytes, slot...} and returns the number of u16 written. */
unsigned ref_expected_vtable(const ref_type *t, uint16_t *out, unsigned cap);

typedef struct ref_entry {
    char *path;
    char *value;
} ref_entry;

typedef struct ref_doc {
    const ref_msg *msg;
    ref_entry *e;
    size_t n, cap;
    unsigned vt_mismatch;  /* tables whose vtable is not the one derived from the member list */
    unsigned nonzero_pad;  /* tables with non-zero bytes outside their slots */
    char err[256];         /* why ref_read failed */
} ref_doc;

/* Reads one message (the bytes after the frame's token). Returns 0, or -1 with doc->err set. */
int ref_read(const ref_msg *m, const uint8_t *msg, size_t len, ref_doc *doc);
void ref_doc_free(ref_doc *doc);

/* The value of a path ("transaction.mutations[2].param1"), or NULL. */
const char *ref_get(const ref_doc *doc, const char *path);
/* Replaces the value of every entry whose path matches pattern, where '*' in the pattern
 * matches any run of characters other than '.'. Returns how many entries changed. */
unsigned ref_mask(ref_doc *doc, const char *pattern, const char *value);
/* Drops entries whose path matches pattern (as ref_mask). */
unsigned ref_drop(ref_doc *doc, const char *pattern);

/* Compares two documents entry by entry. Appends up to max_lines lines
 * "  FIELD: expected X, got Y" to buf (NUL-terminated, cap bytes) and returns the number of
 * differing fields (entries present on one side only count too). */
size_t ref_diff(const ref_doc *want, const ref_doc *got, char *buf, size_t cap, unsigned max_lines);

/* The paths of the fields ref_diff counts (want's order, then got-only ones); the caller
 * frees each path and the array. */
size_t ref_diff_paths(const ref_doc *want, const ref_doc *got, char ***paths);
/* The pattern match of ref_mask: '*' matches any run of characters other than '.'. */
bool ref_glob(const char *pattern, const char *s);

/* Byte helpers for tests. */
long ref_unhex(const char *hex, uint8_t *out, size_t cap);
/* "x'...'" of bytes, as the reader prints them (caller frees). */
char *ref_bytes_value(const uint8_t *p, size_t n);

#endif
