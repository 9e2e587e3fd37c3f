/* The built-in wire types every description is made of. */
#include "fb.h"

#define SCALAR(VAR, NAME, KIND, CT) fb_type VAR = { .name = NAME, .kind = KIND, .csize = sizeof(CT) }

SCALAR(fb_bool, "bool", FB_BOOL, bool);
SCALAR(fb_u8, "uint8", FB_U8, uint8_t);
SCALAR(fb_i8, "int8", FB_I8, int8_t);
SCALAR(fb_u16, "uint16", FB_U16, uint16_t);
SCALAR(fb_i16, "int16", FB_I16, int16_t);
SCALAR(fb_u32, "uint32", FB_U32, uint32_t);
SCALAR(fb_i32, "int32", FB_I32, int32_t);
SCALAR(fb_u64, "uint64", FB_U64, uint64_t);
SCALAR(fb_i64, "int64", FB_I64, int64_t);
SCALAR(fb_f64, "double", FB_F64, double);
SCALAR(fb_uid, "UID", FB_UID, cfdb_uid);
SCALAR(fb_tag, "Tag", FB_TAG, cfdb_tag);
SCALAR(fb_bytes, "bytes", FB_BYTES, cfdb_bytes);

FB_TABLE_DEF(fb_error_table, "Error", cfdb_error_value, FB_FIELD(cfdb_error_value, code, fb_u16));
