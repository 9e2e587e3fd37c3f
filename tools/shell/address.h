/* SPDX-License-Identifier: Apache-2.0 */
/* Process addresses as fdbcli 7.3.77 parses and prints them (flow/network.cpp
 * NetworkAddress::parse / toString, IPAddress, flow/Hostname.actor.cpp isHostname,
 * fdbclient/NativeAPI.actor.cpp AddressExclusion::parse, flow/NetworkAddress.h):
 *   address     "a.b.c.d:port[:tls]" (sscanf %d fields, the whole string) or "[v6]:port[:tls]";
 *               printed "a.b.c.d:port" / "[v6]:port", then ":tls"
 *   hostname    "name(.name)*:port[:tls]" that is not dotted-quad-like
 *   exclusion   an IP alone (a whole machine, port 0) or an address without ":tls";
 *               "0.0.0.0:0"-like ones are not valid
 * The ip is kept as 16 bytes (v4: the first 4, big-endian). */
#ifndef CFDB_SHELL_ADDRESS_H
#define CFDB_SHELL_ADDRESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lexer.h"

typedef struct shell_addr {
    bool v6;
    uint8_t ip[16];
    uint16_t port; /* an exclusion: 0 for a whole machine */
    bool tls;
} shell_addr;

/* NetworkAddress::parse: false for connection_string_invalid */
bool shell_addr_parse(shell_token t, shell_addr *out);
/* NetworkAddress::toString (with ":tls") into buf (64 bytes are enough) */
void shell_addr_format(const shell_addr *a, char *buf, size_t cap);
/* AddressExclusion::parse then isValid */
bool shell_exclusion_parse(shell_token t, shell_addr *out);
/* AddressExclusion::toString: the IP alone for a whole machine */
void shell_exclusion_format(const shell_addr *e, char *buf, size_t cap);
/* IPAddress::toString */
void shell_ip_format(const shell_addr *a, char *buf, size_t cap);
/* AddressExclusion::excludes(addr) */
bool shell_exclusion_excludes(const shell_addr *e, const shell_addr *addr);
/* the order of AddressExclusion (ip, then port): <0, 0, >0 */
int shell_exclusion_cmp(const shell_addr *a, const shell_addr *b);
/* Hostname::isHostname */
bool shell_is_hostname(shell_token t);

#endif
