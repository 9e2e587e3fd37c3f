/* FoundationDB's ObjectSerializer ("flat buffers"), driven by declarative type descriptions.
 *
 * A message type is described once, as data: a table type lists its members in the order
 * of FoundationDB's serializer(ar, ...) call, each with a name, a wire type and the offset
 * of the matching member in our C struct. One generic encoder, decoder and printer walk
 * those descriptions, so adding a message is a description, not new byte-pushing code.
 *
 * Wire rules (flow/include/flow/flat_buffers.h at 7.3.77): a message is
 *   u32 root uoffset | u32 file identifier | vtables and objects..., padded to 8 bytes,
 * where the root table is a one-member wrapper around the item. Tables start with an i32
 * soffset to their vtable {u16 vtable size, u16 table size, u16 slot offsets...}; members
 * get slots in serialization order, unions (Optional, ErrorOr, variant) take two (u8 tag,
 * u32 offset). Strings, vectors, tables and union payloads are reached through forward
 * u32 offsets.
 *
 * C representations, by kind:
 *   scalars        the C scalar (bool, uint8_t ... double)
 *   FB_UID         cfdb_uid
 *   FB_TAG         cfdb_tag
 *   FB_BYTES       cfdb_bytes, zero-copy into the decoded buffer
 *   FB_BLOB        whatever its codec says (custom "dynamic size" encodings)
 *   FB_TABLE       the struct described by its fields
 *   FB_VECTOR      struct { T *items; uint32_t count; }  (see CFDB_VEC)
 *   FB_UNION       struct { uint8_t tag; A a; B b; ... } tag 0 = empty, k = alternative k
 */
#ifndef CFDB_FB_H
#define CFDB_FB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdatomic.h>

#include "cfdb/arena.h"
#include "cfdb/bytes.h"
#include "uid.h"

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "cfdb's wire code assumes a little-endian host, as FoundationDB does"
#endif

typedef enum fb_kind {
    FB_BOOL,
    FB_U8,
    FB_I8,
    FB_U16,
    FB_I16,
    FB_U32,
    FB_I32,
    FB_U64,
    FB_I64,
    FB_F64,
    FB_UID,    /* 16 bytes inline, 8-aligned */
    FB_TAG,    /* struct-like Tag: u16 id, i8 locality, 1 pad byte; 2-aligned */
    FB_BYTES,  /* length-prefixed bytes */
    FB_BLOB,   /* length-prefixed bytes with a custom content codec */
    FB_TABLE,
    FB_VECTOR,
    FB_UNION,
} fb_kind;

/* Struct-like Tag (fdbclient/FDBTypes.h). */
typedef struct cfdb_tag {
    uint16_t id;
    int8_t locality;
} cfdb_tag;

/* Error {u16 code} (flow/Error.h): the error alternative of ErrorOr, and Optional<Error>
 * in load-balanced storage replies. */
typedef struct cfdb_error_value {
    uint16_t code;
} cfdb_error_value;

/* Generic view of every CFDB_VEC(T). */
typedef struct cfdb_vec {
    void *items;
    uint32_t count;
} cfdb_vec;

#define CFDB_VEC(T) \
    struct {        \
        T *items;   \
        uint32_t count; \
    }

/* Optional<T>: tag 0 = absent, 1 = present. */
#define CFDB_OPTIONAL(T) \
    struct {             \
        uint8_t present; \
        T value;         \
    }

typedef struct fb_type fb_type;
typedef struct fb_printer fb_printer;

typedef struct fb_field {
    const char *name;
    const fb_type *type;
    uint32_t offset; /* of the member in the C struct */
} fb_field;

typedef struct fb_alt {
    const fb_type *type;
    uint32_t offset; /* of the alternative's storage in the C union struct */
} fb_alt;

/* Content codec of a dynamic-size ("string strategy") type such as VersionVector. */
typedef struct fb_blob_codec {
    uint32_t (*size)(const void *obj);
    void (*write)(const void *obj, uint8_t *out);
    /* Returns 0 or a positive FoundationDB error code. p may be kept (zero-copy). */
    int (*read)(const uint8_t *p, uint32_t len, void *obj, cfdb_arena *a);
    void (*print)(const void *obj, fb_printer *pr);
} fb_blob_codec;

struct fb_layout; /* computed on first use from the field list */

struct fb_type {
    const char *name;
    fb_kind kind;
    uint32_t csize;
    /* FB_TABLE */
    const fb_field *fields;
    uint32_t nfields;
    /* Optional table hooks for FoundationDB's special encodings (single-key ranges...):
     * pre_encode writes the wire form of obj into tmp (a struct of the same type);
     * post_decode turns the wire form back, or returns a positive error code. */
    void (*pre_encode)(const void *obj, void *tmp);
    int (*post_decode)(void *obj);
    /* FB_VECTOR */
    const fb_type *elem;
    /* FB_UNION */
    const fb_alt *alts;
    uint32_t nalts;
    /* FB_BLOB */
    const fb_blob_codec *blob;
    /* private: lazily built table layout */
    struct fb_layout *_Atomic layout;
};

/* Built-in scalar types. */
extern fb_type fb_bool, fb_u8, fb_i8, fb_u16, fb_i16, fb_u32, fb_i32, fb_u64, fb_i64, fb_f64;
extern fb_type fb_uid, fb_tag, fb_bytes;
extern fb_type fb_error_table; /* Error */

/* ---- Describing types ---- */

#define FB_COUNT(a) ((uint32_t)(sizeof(a) / sizeof((a)[0])))
#define FB_FIELD(S, member, T) { #member, &(T), (uint32_t)offsetof(S, member) }

/* Defines `fb_type VAR` for the C struct S with the given FB_FIELD list. */
#define FB_TABLE_DEF(VAR, NAME, S, ...)                                   \
    static const fb_field VAR##_fields[] = { __VA_ARGS__ };               \
    fb_type VAR = { .name = NAME, .kind = FB_TABLE, .csize = sizeof(S),   \
                    .fields = VAR##_fields, .nfields = FB_COUNT(VAR##_fields) }

#define FB_TABLE_DEF_HOOKS(VAR, NAME, S, PRE, POST, ...)                  \
    static const fb_field VAR##_fields[] = { __VA_ARGS__ };               \
    fb_type VAR = { .name = NAME, .kind = FB_TABLE, .csize = sizeof(S),   \
                    .fields = VAR##_fields, .nfields = FB_COUNT(VAR##_fields), \
                    .pre_encode = PRE, .post_decode = POST }

/* A table with no members (Void). */
#define FB_EMPTY_TABLE_DEF(VAR, NAME, S) \
    fb_type VAR = { .name = NAME, .kind = FB_TABLE, .csize = sizeof(S) }

/* Vector of ELEM; C type must be a CFDB_VEC of ELEM's C type. */
#define FB_VECTOR_DEF(VAR, NAME, ELEM) \
    fb_type VAR = { .name = NAME, .kind = FB_VECTOR, .csize = sizeof(cfdb_vec), .elem = &(ELEM) }

/* Optional<T>: C type CT must be CFDB_OPTIONAL(T's C type). */
#define FB_OPTIONAL_DEF(VAR, NAME, CT, T)                                            \
    static const fb_alt VAR##_alts[] = { { &(T), (uint32_t)offsetof(CT, value) } }; \
    fb_type VAR = { .name = NAME, .kind = FB_UNION, .csize = sizeof(CT), .alts = VAR##_alts, .nalts = 1 }

/* variant / ErrorOr: alternatives as {&type, offsetof(CT, member)}. */
#define FB_UNION_DEF(VAR, NAME, CT, ...)                                          \
    static const fb_alt VAR##_alts[] = { __VA_ARGS__ };                            \
    fb_type VAR = { .name = NAME, .kind = FB_UNION, .csize = sizeof(CT), .alts = VAR##_alts, \
                    .nalts = FB_COUNT(VAR##_alts) }

#define FB_BLOB_DEF(VAR, NAME, CT, CODEC) \
    fb_type VAR = { .name = NAME, .kind = FB_BLOB, .csize = sizeof(CT), .blob = &(CODEC) }

/* ---- Messages ---- */

typedef enum fb_message_kind {
    FB_MSG_REQUEST, /* root = { item } with item a table */
    FB_MSG_REPLY,   /* root = { ErrorOr<Error, item> }: tag 1 error code, tag 2 item */
    FB_MSG_PLAIN,   /* root table is the item itself (e.g. the endpoint-not-found UID) */
} fb_message_kind;

typedef struct fb_message {
    const char *name;
    uint32_t file_id;
    fb_message_kind kind;
    const fb_type *item; /* a table type */
} fb_message;

/* An ErrorOr reply's error alternative; 0 means "the item is present". */
typedef uint16_t cfdb_reply_error;

/* ---- Encoding ---- */

typedef struct fb_writer {
    uint8_t *buf;
    size_t len;
    size_t cap;
    size_t base;     /* message start inside buf (room for a frame header before it) */
    int err;         /* first error, a positive FoundationDB code (0 = none) */
    /* recently written vtables, to share them */
    struct {
        const struct fb_layout *layout;
        size_t pos;
    } vt_cache[16];
    unsigned vt_count;
} fb_writer;

/* Starts a writer whose message begins after `headroom` reserved bytes (e.g. a frame header).
 * The buffer grows with realloc; fb_writer_free releases it. */
void fb_writer_init(fb_writer *w, size_t headroom);
void fb_writer_reset(fb_writer *w, size_t headroom);
void fb_writer_free(fb_writer *w);
static inline uint8_t *fb_writer_message(const fb_writer *w) { return w->buf + w->base; }
static inline size_t fb_writer_message_len(const fb_writer *w) { return w->len - w->base; }

/* Encodes one message. For FB_MSG_REPLY, error != 0 sends that error instead of the item
 * (item may then be NULL). Returns 0 or a positive FoundationDB error code. */
int fb_encode(fb_writer *w, const fb_message *m, const void *item, cfdb_reply_error error);

/* ---- Decoding ---- */

/* Decodes a message (without frame header/token) into item (a zeroed C struct of the item
 * type). Strings point into buf, which must outlive item; vectors are allocated in the arena.
 * For replies, *error receives the error code (0 = item decoded).
 * Checks the file identifier, every offset, length and count against the buffer.
 * Returns 0 or a positive FoundationDB error code (1044 serialization_failed,
 * 2005 inverted_range, 4000 when the arena is out of memory). */
int fb_decode(const fb_message *m, const uint8_t *buf, size_t len, void *item, cfdb_reply_error *error,
              cfdb_arena *a);

/* ObjectWriter(IncludeVersion()) values, as FoundationDB stores some in system keys
 * (fb_versioned.c): the protocol version (8 bytes, little-endian) and one message of m.
 * Encoding writes CFDB_PROTOCOL_VERSION; the result lives in a. */
int fb_encode_versioned(const fb_message *m, const void *item, cfdb_arena *a, cfdb_bytes *out);
/* Decodes such a value into item (zeroed by the caller; strings point into value);
 * *version (may be NULL) gets the prefix. 1044 when shorter than the prefix or when the
 * message does not decode. */
int fb_decode_versioned(const fb_message *m, cfdb_bytes value, void *item, uint64_t *version, cfdb_arena *a);

/* The file identifier of a message buffer (0 if too short). */
uint32_t fb_peek_file_id(const uint8_t *buf, size_t len);

/* ---- Printing ---- */

struct fb_printer {
    FILE *out;
    int indent;
    bool bytes_as_hex; /* print strings as hex instead of escaped printable text */
};

/* Prints a decoded value of type t in an indented "name: value" form. */
void fb_print_value(fb_printer *pr, const fb_type *t, const void *obj);
void fb_print_message(fb_printer *pr, const fb_message *m, const void *item, cfdb_reply_error error);
/* Bytes as FoundationDB prints keys: printable ASCII kept, others as \xNN, in quotes. */
void fb_print_bytes(fb_printer *pr, cfdb_bytes b);

#endif
