/* Configuration database transactions (config_txn.c): the PAXOS configuration transaction of
 * libfdb_c 7.3.77 (fdbclient/PaxosConfigTransaction.actor.cpp) over the database's
 * coordinators, as far as cfdb uses it. */
#ifndef CFDB_CLIENT_CONFIG_TXN_H
#define CFDB_CLIENT_CONFIG_TXN_H

#include <stdint.h>

#include "database.h"

/* verifyConfigurationDatabaseAlive (fdbclient/ManagementAPI.actor.cpp): reads the key
 * (null, "test") from the configuration database with a PAXOS configuration transaction,
 * retrying as libfdb_c does, until a read answers. libfdb_c waits without bound; cfdb stops
 * after timeout_ns with timed_out (1004). Blocks the calling thread (never the network
 * thread). Returns 0 or a FoundationDB error code. */
int cfdb_config_verify_alive(cfdb_db *db, uint64_t timeout_ns);

#endif
