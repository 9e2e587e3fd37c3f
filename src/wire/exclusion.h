/* Exclusion safety and the system values exclusions are checked against (src/wire/msg_exclusion.c).
 *
 *   ExclusionSafetyCheckRequest (13852702; 7.3.77 fdbclient/include/fdbclient/CommitProxyInterface.h
 *     709-721) serializer(exclusions, reply), sent to CommitProxyInterface.exclusionSafetyCheckReq
 *     (commit.getAdjustedEndpoint(8): CFDB_CP_EXCLUSION_SAFETY_CHECK_REQ);
 *   ExclusionSafetyCheckReply (11; same file 696-707) serializer(safe), answered as
 *     ErrorOr<EnsureTable<...>> (file id 0x0200000B);
 *   AddressExclusion (flow/include/flow/NetworkAddress.h 168-207) serializer(ip, port): a table
 *     {IPAddress, int32}; port 0 names a whole machine.
 *
 * Values decoded here (bounded by the value's bytes; bad bytes give serialization_failed 1044,
 * never a read past the end, and allocations are bounded by the value's length):
 *   \xff/serverList/<id>: decodeServerListValue (fdbclient/SystemData.cpp 898-928): an 8-byte
 *     protocol version then the StorageServerInterface as ObjectWriter wrote it. Values from
 *     before hasStorageInterfaceReadiness (0x0FDB00B071010000, the BinaryReader form) are not
 *     read: 1044.
 *   \xff/logs: decodeLogsValue (SystemData.cpp 498-513): BinaryWriter IncludeVersion, then the
 *     current and the old logs, each int32 count + {UID, NetworkAddress}; a NetworkAddress is
 *     (from hasIPv6, 0x0FDB00B061030000) bool isV6 + uint32 or 16 bytes, else a uint32; then
 *     uint16 port, uint16 flags, and (from hasNetworkAddressHostnameFlag, 0x0FDB00B071010000)
 *     a bool fromHostname. */
#ifndef CFDB_EXCLUSION_H
#define CFDB_EXCLUSION_H

#include "messages.h"

typedef struct cfdb_address_exclusion {
    cfdb_ip_address ip;
    int32_t port; /* 0: the whole machine */
} cfdb_address_exclusion;
typedef CFDB_VEC(cfdb_address_exclusion) cfdb_address_exclusion_vec;

typedef struct cfdb_exclusion_safety_check_request {
    cfdb_address_exclusion_vec exclusions;
    cfdb_reply_promise reply;
} cfdb_exclusion_safety_check_request;
typedef struct cfdb_exclusion_safety_check_reply {
    bool safe;
} cfdb_exclusion_safety_check_reply;
extern const fb_message cfdb_msg_exclusion_safety_check_request, cfdb_msg_exclusion_safety_check_reply;

/* One log of \xff/logs. */
typedef struct cfdb_log_entry {
    cfdb_uid id;
    cfdb_network_address address;
} cfdb_log_entry;
typedef struct cfdb_logs_value {
    cfdb_log_entry *logs, *old_logs; /* in the arena */
    uint32_t nlogs, nold;
} cfdb_logs_value;

/* AddressExclusion::excludes: same IP (v4 or v6 bytes), and same port unless port is 0. */
bool cfdb_exclusion_matches(const cfdb_address_exclusion *e, const cfdb_network_address *addr);

/* decodeServerListValue into out (its strings point into v). 0 or 1044. */
int cfdb_server_list_value_decode(cfdb_bytes v, cfdb_arena *a, cfdb_storage_server_interface *out);
/* logsValue with protocol version pv (the server's \xff/logs), into arena memory. */
int cfdb_logs_value_encode(uint64_t pv, const cfdb_logs_value *in, cfdb_arena *a, cfdb_bytes *out);
/* decodeLogsValue; v6 addresses point into v. 0 or 1044. */
int cfdb_logs_value_decode(cfdb_bytes v, cfdb_arena *a, cfdb_logs_value *out);

#endif
