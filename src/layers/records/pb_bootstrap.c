/* SPDX-License-Identifier: Apache-2.0 */
/* Descriptors for the parts of google/protobuf/descriptor.proto that the descriptor loader
 * reads, so that FileDescriptorSets are decoded by the same codec as records.
 *
 * One table, one row per field: the message it belongs to, its name, number, type, label
 * and (for message fields) the message it holds. The cfdb_pb_message / cfdb_pb_field
 * structures are built from it once (pthread_once): each message's fields are its rows, in
 * table order, with index = position and field_count counted, so adding a field is adding
 * a row. Invariant (checked when building; a table that breaks it leaves every message
 * without fields, which the loader's tests catch): rows are grouped by message and sorted by
 * number within a message, as the codec requires.
 *
 * Field numbers and types are descriptor.proto's (proto2). Enum-typed fields (label, type)
 * are read as int32, and every *Options field as bytes: the loader keeps options raw, so
 * extensions such as the Record Layer's (record), (field) and (schema) options stay
 * available to the metadata layer. Fields not listed (services, extension ranges, source
 * info, ...) decode as unknown fields and are ignored. FieldOptions.packed (2) and
 * MessageOptions.map_entry (7) are read from the raw options.
 */
#include <pthread.h>

#include "pb_internal.h"

static const cfdb_pb_file boot_file = {
    .name = "google/protobuf/descriptor.proto",
    .package = "google.protobuf",
    .proto3 = false,
};

static const char *const boot_names[PB_BOOT_COUNT][2] = {
    [PB_BOOT_FILE_SET] = { "google.protobuf.FileDescriptorSet", "FileDescriptorSet" },
    [PB_BOOT_FILE] = { "google.protobuf.FileDescriptorProto", "FileDescriptorProto" },
    [PB_BOOT_DESCRIPTOR] = { "google.protobuf.DescriptorProto", "DescriptorProto" },
    [PB_BOOT_FIELD] = { "google.protobuf.FieldDescriptorProto", "FieldDescriptorProto" },
    [PB_BOOT_ONEOF] = { "google.protobuf.OneofDescriptorProto", "OneofDescriptorProto" },
    [PB_BOOT_ENUM] = { "google.protobuf.EnumDescriptorProto", "EnumDescriptorProto" },
    [PB_BOOT_ENUM_VALUE] = { "google.protobuf.EnumValueDescriptorProto", "EnumValueDescriptorProto" },
    [PB_BOOT_FIELD_OPTIONS] = { "google.protobuf.FieldOptions", "FieldOptions" },
    [PB_BOOT_MESSAGE_OPTIONS] = { "google.protobuf.MessageOptions", "MessageOptions" },
};

typedef struct boot_row {
    uint8_t owner;          /* pb_boot_id */
    const char *name;
    uint32_t number;
    uint8_t type;           /* cfdb_pb_type */
    uint8_t label;          /* cfdb_pb_label */
    int8_t child;           /* pb_boot_id of a message field, -1 */
} boot_row;

#define S CFDB_PB_STRING
#define I CFDB_PB_INT32
#define B CFDB_PB_BYTES
#define BO CFDB_PB_BOOL
#define M CFDB_PB_MESSAGE
#define OPT CFDB_PB_OPTIONAL
#define REP CFDB_PB_REPEATED

static const boot_row boot_rows[] = {
    { PB_BOOT_FILE_SET, "file", 1, M, REP, PB_BOOT_FILE },

    { PB_BOOT_FILE, "name", 1, S, OPT, -1 },
    { PB_BOOT_FILE, "package", 2, S, OPT, -1 },
    { PB_BOOT_FILE, "dependency", 3, S, REP, -1 },
    { PB_BOOT_FILE, "message_type", 4, M, REP, PB_BOOT_DESCRIPTOR },
    { PB_BOOT_FILE, "enum_type", 5, M, REP, PB_BOOT_ENUM },
    { PB_BOOT_FILE, "options", 8, B, OPT, -1 },
    { PB_BOOT_FILE, "syntax", 12, S, OPT, -1 },

    { PB_BOOT_DESCRIPTOR, "name", 1, S, OPT, -1 },
    { PB_BOOT_DESCRIPTOR, "field", 2, M, REP, PB_BOOT_FIELD },
    { PB_BOOT_DESCRIPTOR, "nested_type", 3, M, REP, PB_BOOT_DESCRIPTOR },
    { PB_BOOT_DESCRIPTOR, "enum_type", 4, M, REP, PB_BOOT_ENUM },
    { PB_BOOT_DESCRIPTOR, "options", 7, B, OPT, -1 },
    { PB_BOOT_DESCRIPTOR, "oneof_decl", 8, M, REP, PB_BOOT_ONEOF },

    { PB_BOOT_FIELD, "name", 1, S, OPT, -1 },
    { PB_BOOT_FIELD, "number", 3, I, OPT, -1 },
    { PB_BOOT_FIELD, "label", 4, I, OPT, -1 },
    { PB_BOOT_FIELD, "type", 5, I, OPT, -1 },
    { PB_BOOT_FIELD, "type_name", 6, S, OPT, -1 },
    { PB_BOOT_FIELD, "default_value", 7, S, OPT, -1 },
    { PB_BOOT_FIELD, "options", 8, B, OPT, -1 },
    { PB_BOOT_FIELD, "oneof_index", 9, I, OPT, -1 },
    { PB_BOOT_FIELD, "proto3_optional", 17, BO, OPT, -1 },

    { PB_BOOT_ONEOF, "name", 1, S, OPT, -1 },

    { PB_BOOT_ENUM, "name", 1, S, OPT, -1 },
    { PB_BOOT_ENUM, "value", 2, M, REP, PB_BOOT_ENUM_VALUE },
    { PB_BOOT_ENUM, "options", 3, B, OPT, -1 },

    { PB_BOOT_ENUM_VALUE, "name", 1, S, OPT, -1 },
    { PB_BOOT_ENUM_VALUE, "number", 2, I, OPT, -1 },

    { PB_BOOT_FIELD_OPTIONS, "packed", 2, BO, OPT, -1 },

    { PB_BOOT_MESSAGE_OPTIONS, "map_entry", 7, BO, OPT, -1 },
};

#define ROWS (sizeof boot_rows / sizeof boot_rows[0])

static cfdb_pb_field boot_fields[ROWS];
static cfdb_pb_message boot_messages[PB_BOOT_COUNT];
static pthread_once_t boot_once = PTHREAD_ONCE_INIT;

static bool table_ok(void)
{
    bool seen[PB_BOOT_COUNT] = { false };
    for (size_t r = 0; r < ROWS; r++) {
        const boot_row *row = &boot_rows[r];
        bool continues = r > 0 && boot_rows[r - 1].owner == row->owner;
        if (row->owner >= PB_BOOT_COUNT || row->child >= PB_BOOT_COUNT || (!continues && seen[row->owner]) ||
            (continues && boot_rows[r - 1].number >= row->number))
            return false;
        seen[row->owner] = true;
    }
    return true;
}

static void build(void)
{
    for (int m = 0; m < PB_BOOT_COUNT; m++) {
        boot_messages[m].full_name = boot_names[m][0];
        boot_messages[m].name = boot_names[m][1];
        boot_messages[m].file = &boot_file;
    }
    if (!table_ok())
        return;
    for (size_t r = 0; r < ROWS; r++) {
        const boot_row *row = &boot_rows[r];
        cfdb_pb_message *msg = &boot_messages[row->owner];
        if (!msg->field_count)
            msg->fields = &boot_fields[r];
        boot_fields[r] = (cfdb_pb_field){
            .name = row->name,
            .number = row->number,
            .type = row->type,
            .label = row->label,
            .presence = row->label != CFDB_PB_REPEATED,
            .oneof = -1,
            .index = msg->field_count++,
            .message = row->child >= 0 ? &boot_messages[row->child] : NULL,
        };
    }
}

const cfdb_pb_message *cfdb_pb_boot(pb_boot_id id)
{
    pthread_once(&boot_once, build);
    return &boot_messages[id];
}
