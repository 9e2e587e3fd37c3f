/* Helper type descriptions shared by the msg_*.c files (defined in msg_types.c). */
#ifndef CFDB_MSG_TYPES_H
#define CFDB_MSG_TYPES_H

#include "messages.h"

extern fb_type cfdb_fb_void, cfdb_fb_reply_promise, cfdb_fb_span_context, cfdb_fb_opt_span_context;
extern fb_type cfdb_fb_tenant_info, cfdb_fb_opt_uid, cfdb_fb_opt_i64, cfdb_fb_opt_bytes, cfdb_fb_opt_error;
extern fb_type cfdb_fb_bytes_vec, cfdb_fb_i64_vec, cfdb_fb_i32_vec, cfdb_fb_opt_i64_vec, cfdb_fb_opt_i32_vec;
extern fb_type cfdb_fb_opt_read_options, cfdb_fb_key_range_vec, cfdb_fb_key_value_vec, cfdb_fb_mutation_vec;
extern fb_type cfdb_fb_opt_tag_set, cfdb_fb_version_vector, cfdb_fb_key_value_blob, cfdb_fb_range_result;
extern fb_type cfdb_fb_network_address_vec, cfdb_fb_request_stream, cfdb_fb_storage_server_interface_vec;
extern fb_type cfdb_fb_grv_proxy_interface_vec, cfdb_fb_commit_proxy_interface_vec;
extern fb_type cfdb_fb_opt_encrypt_key_proxy_interface;
extern fb_type cfdb_fb_ip_address; /* exclusions (issue 12): AddressExclusion.ip */

#define CFDB_REPLY_FILE_ID(id) (0x02000000u | (id))

#endif
