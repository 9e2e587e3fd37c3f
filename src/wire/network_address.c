#include "network_address.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wire_errors.h"

#define CONNECTION_STRING_INVALID CFDB_WIRE_CONNECTION_STRING_INVALID

cfdb_network_address cfdb_network_address_ipv4(uint32_t ip, uint16_t port, uint16_t flags)
{
    cfdb_network_address a;
    memset(&a, 0, sizeof a);
    a.ip.tag = 1;
    a.ip.v4 = ip;
    a.port = port;
    a.flags = flags;
    return a;
}

/* True when s[0..n) is a decimal port (0..65535). */
static bool parse_port(const char *s, size_t n, uint16_t *port)
{
    if (n == 0 || n > 5)
        return false;
    unsigned v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        v = v * 10 + (unsigned)(s[i] - '0');
    }
    if (v > 65535)
        return false;
    *port = (uint16_t)v;
    return true;
}

int cfdb_network_address_parse(const char *s, size_t len, cfdb_network_address *out, uint8_t v6_storage[16])
{
    char buf[128];
    if (len == 0 || len >= sizeof buf)
        return CONNECTION_STRING_INVALID;
    memcpy(buf, s, len);
    buf[len] = 0;
    memset(out, 0, sizeof *out);

    static const char from_hostname[] = "(fromHostname)";
    size_t fl = sizeof from_hostname - 1;
    if (len > fl && strcmp(buf + len - fl, from_hostname) == 0) {
        out->fromHostname = true;
        len -= fl;
        buf[len] = 0;
    }
    if (len > 4 && strcmp(buf + len - 4, ":tls") == 0) {
        out->flags |= CFDB_ADDR_FLAG_TLS;
        len -= 4;
        buf[len] = 0;
    }
    char *colon;
    if (buf[0] == '[') {
        char *close = strchr(buf, ']');
        if (!close || close[1] != ':')
            return CONNECTION_STRING_INVALID;
        *close = 0;
        struct in6_addr a6;
        if (inet_pton(AF_INET6, buf + 1, &a6) != 1)
            return CONNECTION_STRING_INVALID;
        memcpy(v6_storage, &a6, 16);
        out->ip.tag = 2;
        out->ip.v6.items = v6_storage;
        out->ip.v6.count = 16;
        colon = close + 1;
    } else {
        colon = strrchr(buf, ':');
        if (!colon)
            return CONNECTION_STRING_INVALID;
        *colon = 0;
        unsigned a, b, c, d;
        char tail;
        if (sscanf(buf, "%u.%u.%u.%u%c", &a, &b, &c, &d, &tail) != 4 || a > 255 || b > 255 || c > 255 || d > 255)
            return CONNECTION_STRING_INVALID;
        out->ip.tag = 1;
        out->ip.v4 = a << 24 | b << 16 | c << 8 | d;
    }
    if (!parse_port(colon + 1, strlen(colon + 1), &out->port))
        return CONNECTION_STRING_INVALID;
    return 0;
}

size_t cfdb_network_address_format(const cfdb_network_address *a, char *buf, size_t cap)
{
    char ip[64] = "?";
    if (a->ip.tag == 1) {
        uint32_t v = a->ip.v4;
        snprintf(ip, sizeof ip, "%u.%u.%u.%u", v >> 24, (v >> 16) & 255, (v >> 8) & 255, v & 255);
    } else if (a->ip.tag == 2 && a->ip.v6.count == 16) {
        char t[INET6_ADDRSTRLEN];
        inet_ntop(AF_INET6, a->ip.v6.items, t, sizeof t);
        snprintf(ip, sizeof ip, "[%s]", t);
    }
    int n = snprintf(buf, cap, "%s:%u%s", ip, a->port, (a->flags & CFDB_ADDR_FLAG_TLS) ? ":tls" : "");
    if (n < 0)
        return 0;
    return (size_t)n < cap ? (size_t)n : (cap ? cap - 1 : 0);
}
