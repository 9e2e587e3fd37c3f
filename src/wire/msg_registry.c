/* The list of every described message, and lookups for tools and tests. */
#include <string.h>

#include "config_messages.h"
#include "exclusion.h"
#include "messages.h"

const fb_message *const cfdb_all_messages[] = {
    /* first entry wins for shared file identifiers: the data-path meaning */
    &cfdb_msg_ping_request,
    &cfdb_msg_void_reply,
    &cfdb_msg_protocol_info_request,
    &cfdb_msg_protocol_info_reply,
    &cfdb_msg_endpoint_not_found,
    &cfdb_msg_open_database_coord_request,
    &cfdb_msg_client_db_info_reply,
    &cfdb_msg_get_leader_request,
    &cfdb_msg_get_leader_reply,
    &cfdb_msg_cluster_controller_client_interface,
    &cfdb_msg_status_request,
    &cfdb_msg_status_reply,
    &cfdb_msg_global_config_refresh_request,
    &cfdb_msg_global_config_refresh_reply,
    &cfdb_msg_get_read_version_request,
    &cfdb_msg_get_read_version_reply,
    &cfdb_msg_get_key_server_locations_request,
    &cfdb_msg_get_key_server_locations_reply,
    &cfdb_msg_commit_transaction_request,
    &cfdb_msg_commit_id_reply,
    &cfdb_msg_get_tenant_id_request,
    &cfdb_msg_get_tenant_id_reply,
    &cfdb_msg_expire_idempotency_id_request,
    &cfdb_msg_get_value_request,
    &cfdb_msg_get_value_reply,
    &cfdb_msg_get_key_request,
    &cfdb_msg_get_key_reply,
    &cfdb_msg_get_key_values_request,
    &cfdb_msg_get_key_values_reply,
    &cfdb_msg_get_mapped_key_values_request,
    &cfdb_msg_get_mapped_key_values_reply,
    &cfdb_msg_watch_value_request,
    &cfdb_msg_watch_value_reply,
    &cfdb_msg_wait_metrics_request,
    &cfdb_msg_storage_metrics_reply,
    &cfdb_msg_split_range_request,
    &cfdb_msg_split_range_reply,
    &cfdb_msg_storage_server_interface,
    &cfdb_msg_get_health_metrics_request,
    &cfdb_msg_get_health_metrics_reply,
    &cfdb_msg_get_dd_metrics_request,
    &cfdb_msg_get_dd_metrics_reply,
    &cfdb_msg_proxy_snap_request,
    &cfdb_msg_force_recovery_request,
    &cfdb_msg_get_client_workers_request,
    &cfdb_msg_client_workers_reply,
    &cfdb_msg_reboot_request,
    /* exclusions (issue 12) */
    &cfdb_msg_exclusion_safety_check_request,
    &cfdb_msg_exclusion_safety_check_reply,
    /* configuration database (wt-configdb) */
    &cfdb_msg_config_get_generation_request,
    &cfdb_msg_config_get_generation_reply,
    &cfdb_msg_config_get_request,
    &cfdb_msg_config_get_reply,
    &cfdb_msg_config_commit_request,
    &cfdb_msg_config_get_classes_request,
    &cfdb_msg_config_get_classes_reply,
    &cfdb_msg_config_get_knobs_request,
    &cfdb_msg_config_get_knobs_reply,
};
const unsigned cfdb_all_messages_count = sizeof cfdb_all_messages / sizeof cfdb_all_messages[0];

const fb_message *cfdb_message_by_file_id(uint32_t file_id)
{
    for (unsigned i = 0; i < cfdb_all_messages_count; i++)
        if (cfdb_all_messages[i]->file_id == file_id)
            return cfdb_all_messages[i];
    return NULL;
}

const fb_message *cfdb_message_by_name(const char *name)
{
    for (unsigned i = 0; i < cfdb_all_messages_count; i++) {
        const fb_message *m = cfdb_all_messages[i];
        if (strcmp(m->name, name) == 0 || strcmp(m->item->name, name) == 0)
            return m;
    }
    return NULL;
}
