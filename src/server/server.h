/* cfdb-server: a FoundationDB 7.3 protocol-compatible dev server in one process.
 * Embeddable: tests create it on their own event loop with port 0. */
#ifndef CFDB_SERVER_H
#define CFDB_SERVER_H

#include <stdbool.h>
#include <stdint.h>

#include "event_loop.h"

#define CFDB_SERVER_MAX_BOUNDARIES 64

typedef struct cfdb_server_config {
    const char *listen_ip;     /* "127.0.0.1" when NULL */
    uint16_t port;             /* 0: pick a free port */
    const char *cluster_file;  /* written once listening; NULL: none */
    const char *description;   /* cluster file description ("cfdb") */
    const char *cluster_id;    /* cluster file id (random when NULL) */
    const char *datadir;       /* durable when set */
    bool recover_truncate;     /* a WAL corrupt mid-file is cut there instead of refused */
    int storage_servers;       /* default 3 */
    bool separate_ports;       /* each role on its own listener */
    /* Shard boundaries (raw keys, ascending, not ""), owners round robin. NULL: defaults. */
    const char *boundaries[CFDB_SERVER_MAX_BOUNDARIES];
    unsigned boundary_lens[CFDB_SERVER_MAX_BOUNDARIES];
    int nboundaries;
    bool custom_boundaries;
    int control_port;          /* -1: no control socket; 0: any free port */
    bool quiet;                /* no log lines on stderr */
    uint64_t seed;             /* token randomness; 0: from the clock */
    int64_t initial_version;   /* first version (default 1000) */
    /* Every received frame appended as a JSON line, in the golden captures' format
     * (cfdb-decode --jsonl reads it); NULL: off. */
    const char *trace_frames;
    /* TLS on every listener when tls_cert is set: addresses are advertised with ":tls" (the
     * cluster file too), clients are asked for a certificate and judged by tls_verify_peers
     * (default Check.Valid=1) when they present one. */
    const char *tls_cert, *tls_key, *tls_ca, *tls_password, *tls_verify_peers;
    /* Limits on what peers can make the server hold (0: the default in brackets).
     * max_connections [RLIMIT_NOFILE - 32]: more are accepted and closed at once.
     * memory_budget [512 MiB]: input and output buffers across all connections.
     * conn_out_budget [8 MiB]: replies waiting for one peer before its requests stop being read. */
    int max_connections;
    uint64_t memory_budget;
    uint64_t conn_out_budget;
    /* FlowTransport's knobs of the same names, in seconds [180, 1.2, 2]: a connection silent for
     * IDLE_TIMEOUT x INCOMING_IDLE_MULTIPLIER is pinged and closed if nothing comes within
     * TIMEOUT; a new connection has TIMEOUT to complete its handshake. */
    double connection_monitor_idle_timeout;
    double connection_monitor_incoming_idle_multiplier;
    double connection_monitor_timeout;
    /* \xff/conf/tenant_mode written at start (0 disabled, 1 optional, 2 required); -1: left
     * as the database has it (a new database: disabled). */
    int tenant_mode;
    /* More coordination servers of this one-process cluster (--coordinator PORT, repeatable):
     * each listens on listen_ip at its port (0: a free one) and answers the coordinator
     * requests, so the coordinators can be changed among them (coord_change.c). */
#define CFDB_SERVER_MAX_EXTRA_COORDINATORS 7
    uint16_t extra_coordinator_ports[CFDB_SERVER_MAX_EXTRA_COORDINATORS];
    int n_extra_coordinators;
} cfdb_server_config;

typedef struct cfdb_server cfdb_server;

void cfdb_server_config_init(cfdb_server_config *cfg);
/* Creates the server on loop (recovering from datadir if set) and starts listening.
 * Returns NULL and prints why on failure. */
cfdb_server *cfdb_server_create(cfdb_loop *loop, const cfdb_server_config *cfg);
void cfdb_server_destroy(cfdb_server *s);
uint16_t cfdb_server_port(const cfdb_server *s);
uint16_t cfdb_server_control_port(const cfdb_server *s);
/* "desc:id@127.0.0.1:PORT" */
const char *cfdb_server_connection_string(const cfdb_server *s);
/* Runs one control command (same language as the control socket); answer in out. */
void cfdb_server_control(cfdb_server *s, const char *line, char *out, unsigned cap);

#endif
