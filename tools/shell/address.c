/* SPDX-License-Identifier: Apache-2.0 */
/* Process addresses, exclusions and hostnames as fdbcli 7.3.77 reads them (address.h). */
#include "address.h"

#include <arpa/inet.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* the token as a C string in buf; false when it does not fit or holds a NUL */
static bool cstr(shell_token t, char *buf, size_t cap)
{
    if (t.n >= cap || memchr(t.p, 0, t.n))
        return false;
    memcpy(buf, t.p, t.n);
    buf[t.n] = 0;
    return true;
}

/* IPAddress::parse (boost's address::from_string): dotted v4 or v6 */
static bool ip_parse(const char *s, shell_addr *a)
{
    memset(a->ip, 0, sizeof a->ip);
    if (inet_pton(AF_INET, s, a->ip) == 1) {
        a->v6 = false;
        return true;
    }
    a->v6 = true;
    return inet_pton(AF_INET6, s, a->ip) == 1;
}

bool shell_addr_parse(shell_token t, shell_addr *out)
{
    char f[128];
    if (t.n == 0 || !cstr(t, f, sizeof f))
        return false;
    memset(out, 0, sizeof *out);
    size_t n = strlen(f);
    if (n > 4 && strcmp(f + n - 4, ":tls") == 0) {
        out->tls = true;
        f[n -= 4] = 0;
    }
    if (f[0] == '[') { /* "[ip]:port": std::stoi of what follows "]:" */
        char *end = strchr(f, ']');
        if (!end || end[1] != ':')
            return false;
        char *stop;
        long port = strtol(end + 2, &stop, 10);
        if (stop == end + 2)
            return false;
        *end = 0;
        if (!ip_parse(f + 1, out))
            return false;
        out->port = (uint16_t)port;
        return true;
    }
    int a, b, c, d, port, count = -1;
    if (sscanf(f, "%d.%d.%d.%d:%d%n", &a, &b, &c, &d, &port, &count) < 5 || count != (int)n)
        return false;
    uint32_t ip = ((uint32_t)a << 24) + ((uint32_t)b << 16) + ((uint32_t)c << 8) + (uint32_t)d;
    out->v6 = false;
    for (int i = 0; i < 4; i++)
        out->ip[i] = (uint8_t)(ip >> (24 - 8 * i));
    out->port = (uint16_t)port;
    return true;
}

void shell_ip_format(const shell_addr *a, char *buf, size_t cap)
{
    if (a->v6)
        inet_ntop(AF_INET6, a->ip, buf, (socklen_t)cap);
    else
        snprintf(buf, cap, "%d.%d.%d.%d", a->ip[0], a->ip[1], a->ip[2], a->ip[3]);
}

void shell_addr_format(const shell_addr *a, char *buf, size_t cap)
{
    char ip[64];
    shell_ip_format(a, ip, sizeof ip);
    snprintf(buf, cap, a->v6 ? "[%s]:%d%s" : "%s:%d%s", ip, a->port, a->tls ? ":tls" : "");
}

bool shell_exclusion_parse(shell_token t, shell_addr *out)
{
    char s[128];
    if (!cstr(t, s, sizeof s))
        return false;
    memset(out, 0, sizeof *out);
    bool ok = ip_parse(s, out);
    if (!ok) {
        ok = shell_addr_parse(t, out) && !out->tls;
        out->tls = false;
    }
    if (!ok)
        memset(out, 0, sizeof *out);
    bool valid = out->port != 0;
    for (int i = 0; i < 16; i++)
        valid |= out->ip[i] != 0;
    return valid;
}

void shell_exclusion_format(const shell_addr *e, char *buf, size_t cap)
{
    if (e->port)
        shell_addr_format(e, buf, cap);
    else
        shell_ip_format(e, buf, cap);
}

static int ip_cmp(const shell_addr *a, const shell_addr *b)
{
    if (a->v6 != b->v6)
        return a->v6 ? 1 : -1; /* IPAddress's variant order: v4 first */
    return memcmp(a->ip, b->ip, a->v6 ? 16 : 4);
}

int shell_exclusion_cmp(const shell_addr *a, const shell_addr *b)
{
    int c = ip_cmp(a, b);
    return c ? c : (a->port > b->port) - (a->port < b->port);
}

bool shell_exclusion_excludes(const shell_addr *e, const shell_addr *addr)
{
    return ip_cmp(e, addr) == 0 && (e->port == 0 || e->port == addr->port);
}

bool shell_is_hostname(shell_token t)
{
    static const char validation[] = "^([A-Za-z0-9_-]+\\.?)+:[0-9]+(:tls)?$";
    static const char ipv4[] = "^([0-9]{1,3}\\.?){4,}:[0-9]+(:tls)?$";
    char s[256];
    if (!cstr(t, s, sizeof s))
        return false;
    regex_t v, q;
    if (regcomp(&v, validation, REG_EXTENDED | REG_NOSUB))
        return false;
    if (regcomp(&q, ipv4, REG_EXTENDED | REG_NOSUB)) {
        regfree(&v);
        return false;
    }
    bool r = regexec(&q, s, 0, NULL, 0) != 0 && regexec(&v, s, 0, NULL, 0) == 0;
    regfree(&v);
    regfree(&q);
    return r;
}
