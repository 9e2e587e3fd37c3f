/* Text form of network addresses and cluster-file coordinator entries
 * (NetworkAddress::parse / toString in flow/network.cpp). */
#ifndef CFDB_NETWORK_ADDRESS_H
#define CFDB_NETWORK_ADDRESS_H

#include <stddef.h>

#include "messages.h"

/* Parses "a.b.c.d:port[:tls]" or "[v6]:port[:tls]" (with an optional "(fromHostname)").
 * v6 bytes are copied into v6_storage (16 bytes) which must outlive out.
 * Returns 0, or 2104 connection_string_invalid. */
int cfdb_network_address_parse(const char *s, size_t len, cfdb_network_address *out, uint8_t v6_storage[16]);

/* "127.0.0.1:4500", "[::1]:4500:tls"; returns the length written (truncated to cap). */
size_t cfdb_network_address_format(const cfdb_network_address *a, char *buf, size_t cap);

/* An IPv4 address from dotted-quad text into FoundationDB's host-order integer. */
cfdb_network_address cfdb_network_address_ipv4(uint32_t ip, uint16_t port, uint16_t flags);

#endif
