/* SPDX-License-Identifier: Apache-2.0 */
/* Static descriptors for the parts of google/protobuf/descriptor.proto that the descriptor
 * loader reads, so that FileDescriptorSets are decoded by the same codec as records.
 *
 * Field numbers and types are descriptor.proto's (proto2). Enum-typed fields (label, type)
 * are read as int32, and every *Options field as bytes: the loader keeps options raw, so
 * extensions such as the Record Layer's (record), (field) and (schema) options stay
 * available to the metadata layer. Fields not listed here (services, extension ranges,
 * source info, ...) decode as unknown fields and are ignored. Fields are sorted by number
 * and each field's index is its position, as the codec requires.
 */
#include "pb_internal.h"

static const cfdb_pb_file boot_file = {
    .name = "google/protobuf/descriptor.proto",
    .package = "google.protobuf",
    .proto3 = false,
};

#define BF(nm, num, ty, lab, idx, msg)                                                         \
    {                                                                                           \
        .name = nm, .number = num, .type = ty, .label = lab, .presence = (lab) != 3,            \
        .oneof = -1, .index = idx, .message = msg                                               \
    }
#define OPT CFDB_PB_OPTIONAL
#define REP CFDB_PB_REPEATED

static const cfdb_pb_message boot_descriptor, boot_field, boot_oneof, boot_enum, boot_enum_value;

static const cfdb_pb_field boot_enum_value_fields[] = {
    BF("name", 1, CFDB_PB_STRING, OPT, 0, NULL),
    BF("number", 2, CFDB_PB_INT32, OPT, 1, NULL),
};
static const cfdb_pb_message boot_enum_value = {
    .full_name = "google.protobuf.EnumValueDescriptorProto", .name = "EnumValueDescriptorProto",
    .fields = boot_enum_value_fields, .field_count = 2, .file = &boot_file,
};

static const cfdb_pb_field boot_enum_fields[] = {
    BF("name", 1, CFDB_PB_STRING, OPT, 0, NULL),
    BF("value", 2, CFDB_PB_MESSAGE, REP, 1, &boot_enum_value),
    BF("options", 3, CFDB_PB_BYTES, OPT, 2, NULL),
};
static const cfdb_pb_message boot_enum = {
    .full_name = "google.protobuf.EnumDescriptorProto", .name = "EnumDescriptorProto",
    .fields = boot_enum_fields, .field_count = 3, .file = &boot_file,
};

static const cfdb_pb_field boot_oneof_fields[] = {
    BF("name", 1, CFDB_PB_STRING, OPT, 0, NULL),
};
static const cfdb_pb_message boot_oneof = {
    .full_name = "google.protobuf.OneofDescriptorProto", .name = "OneofDescriptorProto",
    .fields = boot_oneof_fields, .field_count = 1, .file = &boot_file,
};

static const cfdb_pb_field boot_field_fields[] = {
    BF("name", 1, CFDB_PB_STRING, OPT, 0, NULL),
    BF("number", 3, CFDB_PB_INT32, OPT, 1, NULL),
    BF("label", 4, CFDB_PB_INT32, OPT, 2, NULL),
    BF("type", 5, CFDB_PB_INT32, OPT, 3, NULL),
    BF("type_name", 6, CFDB_PB_STRING, OPT, 4, NULL),
    BF("default_value", 7, CFDB_PB_STRING, OPT, 5, NULL),
    BF("options", 8, CFDB_PB_BYTES, OPT, 6, NULL),
    BF("oneof_index", 9, CFDB_PB_INT32, OPT, 7, NULL),
    BF("proto3_optional", 17, CFDB_PB_BOOL, OPT, 8, NULL),
};
static const cfdb_pb_message boot_field = {
    .full_name = "google.protobuf.FieldDescriptorProto", .name = "FieldDescriptorProto",
    .fields = boot_field_fields, .field_count = 9, .file = &boot_file,
};

static const cfdb_pb_field boot_descriptor_fields[] = {
    BF("name", 1, CFDB_PB_STRING, OPT, 0, NULL),
    BF("field", 2, CFDB_PB_MESSAGE, REP, 1, &boot_field),
    BF("nested_type", 3, CFDB_PB_MESSAGE, REP, 2, &boot_descriptor),
    BF("enum_type", 4, CFDB_PB_MESSAGE, REP, 3, &boot_enum),
    BF("options", 7, CFDB_PB_BYTES, OPT, 4, NULL),
    BF("oneof_decl", 8, CFDB_PB_MESSAGE, REP, 5, &boot_oneof),
};
static const cfdb_pb_message boot_descriptor = {
    .full_name = "google.protobuf.DescriptorProto", .name = "DescriptorProto",
    .fields = boot_descriptor_fields, .field_count = 6, .file = &boot_file,
};

static const cfdb_pb_field boot_file_fields[] = {
    BF("name", 1, CFDB_PB_STRING, OPT, 0, NULL),
    BF("package", 2, CFDB_PB_STRING, OPT, 1, NULL),
    BF("dependency", 3, CFDB_PB_STRING, REP, 2, NULL),
    BF("message_type", 4, CFDB_PB_MESSAGE, REP, 3, &boot_descriptor),
    BF("enum_type", 5, CFDB_PB_MESSAGE, REP, 4, &boot_enum),
    BF("options", 8, CFDB_PB_BYTES, OPT, 5, NULL),
    BF("syntax", 12, CFDB_PB_STRING, OPT, 6, NULL),
};
const cfdb_pb_message cfdb_pb_boot_file = {
    .full_name = "google.protobuf.FileDescriptorProto", .name = "FileDescriptorProto",
    .fields = boot_file_fields, .field_count = 7, .file = &boot_file,
};

static const cfdb_pb_field boot_file_set_fields[] = {
    BF("file", 1, CFDB_PB_MESSAGE, REP, 0, &cfdb_pb_boot_file),
};
const cfdb_pb_message cfdb_pb_boot_file_set = {
    .full_name = "google.protobuf.FileDescriptorSet", .name = "FileDescriptorSet",
    .fields = boot_file_set_fields, .field_count = 1, .file = &boot_file,
};

/* FieldOptions.packed (2) and MessageOptions.map_entry (7), read from the raw options. */
static const cfdb_pb_field boot_field_options_fields[] = {
    BF("packed", 2, CFDB_PB_BOOL, OPT, 0, NULL),
};
const cfdb_pb_message cfdb_pb_boot_field_options = {
    .full_name = "google.protobuf.FieldOptions", .name = "FieldOptions",
    .fields = boot_field_options_fields, .field_count = 1, .file = &boot_file,
};
static const cfdb_pb_field boot_message_options_fields[] = {
    BF("map_entry", 7, CFDB_PB_BOOL, OPT, 0, NULL),
};
const cfdb_pb_message cfdb_pb_boot_message_options = {
    .full_name = "google.protobuf.MessageOptions", .name = "MessageOptions",
    .fields = boot_message_options_fields, .field_count = 1, .file = &boot_file,
};
