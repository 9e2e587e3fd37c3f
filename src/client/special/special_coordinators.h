/* What special_coordinators.c (the coordinators/ commit) shares with
 * special_auto_coordinators.c (management/auto_coordinators): one coordinator of a connection
 * string with what NetworkAddress and Hostname compare, its hostname resolution, and the
 * GetLeaderRequest probe both ManagementAPI paths make (changeQuorumChecker and
 * AutoQuorumChange::isAcceptable). Worker-thread code only. */
#ifndef CFDB_CLIENT_SPECIAL_COORDINATORS_H
#define CFDB_CLIENT_SPECIAL_COORDINATORS_H

#include <stdbool.h>
#include <stdint.h>

#include "cluster_file.h"
#include "transaction.h"

#define SK_MAX_COORDINATORS 64

typedef struct sk_coord {
    char text[300]; /* canonical: "1.2.3.4:4500", "[::1]:4500:tls", "host:4500" */
    bool hostname, tls;
    cfdb_network_address addr; /* IP coordinators, and hostnames once resolved */
    uint8_t v6[16];
    char host[256], service[32];
} sk_coord;

/* From a parsed connection string's coordinator. */
void sk_coord_from(sk_coord *out, const cfdb_coordinator *c);
/* NetworkAddress's order for addresses (plain before TLS, by IP, by port), Hostname's for
 * hostnames (plain before TLS, by host, by service); addresses before hostnames. qsort. */
int sk_coord_cmp(const void *a, const void *b);
/* Resolves a hostname (getaddrinfo); true for addresses; false when it does not resolve. */
bool sk_coord_resolve(sk_coord *c);
/* GetLeaderRequest{key, UID()} to each (resolved) coordinator: 0 when all answered within
 * timeout_ns (*all_leaders: every answer named a leader), 1 when one did not, else the error
 * one answered with. A lost connection asks again. */
int sk_coord_probe(cfdb_txn *tx, const sk_coord *c, int n, const char *key, uint64_t timeout_ns, bool *all_leaders);

#endif
