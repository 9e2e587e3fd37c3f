/* Management role (management.c): the cluster-management requests libfdb_c sends outside
 * transactions. */
#ifndef CFDB_SERVER_MANAGEMENT_H
#define CFDB_SERVER_MANAGEMENT_H

#include "srv_core.h"

/* ClusterInterface.forceRecovery (ForceRecoveryRequest) and CommitProxyInterface
 * proxySnapReq (ProxySnapRequest): what libfdb_c's force_recovery_with_data_loss and
 * create_snapshot send. */
void mgmt_force_recovery(srv *s, srv_conn *c, const uint8_t *msg, uint32_t len);
void mgmt_proxy_snap(srv *s, srv_conn *c, const uint8_t *msg, uint32_t len);

/* ClusterInterface.getClientWorkers (GetClientWorkersRequest): this process's
 * ClientWorkerInterface; RebootRequest on its reboot stream (index 0 of worker_base;
 * the profiler and setFailureInjection streams, indexes 1 and 2, are not served). */
#define MGMT_WORKER_PROFILER 1
#define MGMT_WORKER_FAILURE_INJECTION 2
void mgmt_client_workers(srv *s, srv_conn *c, const uint8_t *msg, uint32_t len);
void mgmt_reboot(srv *s, srv_conn *c, const uint8_t *msg, uint32_t len);

#endif
