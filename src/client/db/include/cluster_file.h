/* Cluster files and connection strings: parsing exactly as
 * libfdb_c 7.3 does (ClusterConnectionString in fdbclient/MonitorLeader.actor.cpp,
 * NetworkAddress::parse, Hostname::isHostname/parse), the canonical text form,
 * locating the file, and rewriting it atomically. */
#ifndef CFDB_CLIENT_CLUSTER_FILE_H
#define CFDB_CLIENT_CLUSTER_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "messages.h"

/* MAX_CLUSTER_FILE_BYTES */
#define CFDB_MAX_CLUSTER_FILE_BYTES 60000
#define CFDB_CLUSTER_FILE_ENV "FDB_CLUSTER_FILE"
#define CFDB_DEFAULT_CLUSTER_FILE "/etc/foundationdb/fdb.cluster"

typedef struct cfdb_coordinator {
    bool is_hostname;
    bool tls;
    /* IP coordinators: addr.ip.v6 points at v6 (16 bytes) for IPv6 */
    cfdb_network_address addr;
    uint8_t v6[16];
    /* hostname coordinators: "host" and "service" (the port text), NUL-terminated */
    char *host;
    char *service;
} cfdb_coordinator;

typedef struct cfdb_cluster_string {
    char *key;         /* "description:id" */
    char *description; /* part of key before ':' */
    char *id;          /* part after ':' */
    /* IP coordinators first (file order), then hostnames (file order), as
     * ClusterConnectionString keeps them (coords, then hostnames). */
    cfdb_coordinator *coords;
    size_t count;
    size_t n_ip; /* coords[0..n_ip) are IPs, the rest hostnames */
} cfdb_cluster_string;

/* Parses the contents of a cluster file or a connection string (whitespace and
 * #-comments are removed first). Returns 0, CFDB_ERR_CONNECTION_STRING_INVALID,
 * or CFDB_ERR_UNKNOWN_ERROR (4000, out of memory). On error *out is left empty (safe to free). */
int cfdb_cluster_string_parse(const char *text, size_t len, cfdb_cluster_string *out);
void cfdb_cluster_string_free(cfdb_cluster_string *cs);
/* Deep copy. Returns 0 or CFDB_ERR_UNKNOWN_ERROR (4000, out of memory). */
int cfdb_cluster_string_copy(cfdb_cluster_string *dst, const cfdb_cluster_string *src);
/* Canonical text (ClusterConnectionString::toString): key@ip1,ip2,...,host1,...
 * Returns a malloc'ed NUL-terminated string or NULL (out of memory). */
char *cfdb_cluster_string_format(const cfdb_cluster_string *cs);
/* One coordinator's text ("1.2.3.4:4500:tls", "[::1]:4500", "host:4500:tls").
 * Returns the length it needs (snprintf-style). */
size_t cfdb_coordinator_format(const cfdb_coordinator *c, char *buf, size_t cap);
/* Both canonical texts are equal. */
bool cfdb_cluster_string_equal(const cfdb_cluster_string *a, const cfdb_cluster_string *b);

/* Which file libfdb_c would use (ClusterConnectionFile::lookupClusterFileName):
 * path if non-empty; else $FDB_CLUSTER_FILE if set (even when the file does not
 * exist); else ./fdb.cluster if it can be opened; else the platform default.
 * *is_default (may be NULL) tells whether the choice came from neither path nor
 * the environment. Returns a malloc'ed path or NULL (out of memory). */
char *cfdb_cluster_file_locate(const char *path, bool *is_default);

/* Reads and parses a cluster file: CFDB_ERR_NO_CLUSTER_FILE_FOUND (1515) when it
 * cannot be opened, CFDB_ERR_FILE_TOO_LARGE (1516) above 60000 bytes,
 * CFDB_ERR_CONNECTION_STRING_INVALID (2104), CFDB_ERR_UNKNOWN_ERROR (4000) out of memory, else 0. */
int cfdb_cluster_file_read(const char *path, cfdb_cluster_string *out);

/* locate + read. *resolved_path (may be NULL) receives the malloc'ed path used,
 * also on error (NULL if out of memory). */
int cfdb_cluster_file_open(const char *path, cfdb_cluster_string *out, char **resolved_path);

/* The bytes ClusterConnectionFile::persist writes: two header comment lines and
 * the canonical string with a trailing newline. malloc'ed, NULL if out of memory. */
char *cfdb_cluster_file_contents(const cfdb_cluster_string *cs);

/* Atomically replaces path with cfdb_cluster_file_contents(cs) (temporary file in
 * the same directory, fsync, rename). Returns 0 or CFDB_ERR_IO_ERROR. */
int cfdb_cluster_file_write(const char *path, const cfdb_cluster_string *cs);

/* Whether the file at path parses to the same connection string as cs
 * (IClusterConnectionRecord::upToDate); false on any error. */
bool cfdb_cluster_file_up_to_date(const char *path, const cfdb_cluster_string *cs);

#endif
