#include "cluster_file.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "error_codes.h"

#define INVALID CFDB_ERR_CONNECTION_STRING_INVALID

static const char header[] = "# DO NOT EDIT!\n# This file is auto-generated, it is not to be edited by hand\n";

static char *dupn(const char *s, size_t n)
{
    char *p = malloc(n + 1);
    if (!p)
        return NULL;
    memcpy(p, s, n);
    p[n] = 0;
    return p;
}

static bool is_alnum(char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

void cfdb_cluster_string_free(cfdb_cluster_string *cs)
{
    if (!cs)
        return;
    for (size_t i = 0; i < cs->count; i++) {
        free(cs->coords[i].host);
        free(cs->coords[i].service);
    }
    free(cs->coords);
    free(cs->key);
    free(cs->description);
    free(cs->id);
    memset(cs, 0, sizeof *cs);
}

/* Whitespace (space, tab, CR, LF) is dropped everywhere; '#' starts a comment up
 * to the next CR or LF. */
static char *trim(const char *s, size_t len, size_t *out_len)
{
    char *t = malloc(len + 1);
    if (!t)
        return NULL;
    size_t n = 0;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        if (c == '#') {
            i++;
            while (i < len && s[i] != '\n' && s[i] != '\r')
                i++;
            if (i >= len)
                break;
        } else if (c != ' ' && c != '\n' && c != '\r' && c != '\t') {
            t[n++] = c;
        }
    }
    t[n] = 0;
    *out_len = n;
    return t;
}

/* ^([\w\-]+\.?)+ : word characters and '-', dots allowed singly and not first. */
static bool match_host_part(const char *s, size_t n)
{
    if (n == 0 || s[0] == '.')
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c == '.') {
            if (s[i - 1] == '.')
                return false;
        } else if (!(is_alnum(c) || c == '_' || c == '-')) {
            return false;
        }
    }
    return true;
}

/* ^([\d]{1,3}\.?){4,} : digits and single dots, starting with a digit, and at
 * least four digit groups possible, i.e. at least four digits. */
static bool match_ipv4_part(const char *s, size_t n)
{
    if (n == 0 || !is_digit(s[0]))
        return false;
    size_t digits = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '.') {
            if (s[i - 1] == '.')
                return false;
        } else if (is_digit(s[i])) {
            digits++;
        } else {
            return false;
        }
    }
    return digits >= 4;
}

/* PART ":" digits+ (":tls")? where PART is matched by part_ok. */
static bool match_addr(const char *s, size_t n, bool (*part_ok)(const char *, size_t))
{
    if (n > 4 && memcmp(s + n - 4, ":tls", 4) == 0) {
        /* try with the suffix first; without it ":tls" would have to be the port */
        size_t m = n - 4;
        size_t c = m;
        while (c > 0 && is_digit(s[c - 1]))
            c--;
        if (c < m && c > 0 && s[c - 1] == ':' && part_ok(s, c - 1))
            return true;
    }
    size_t c = n;
    while (c > 0 && is_digit(s[c - 1]))
        c--;
    return c < n && c > 0 && s[c - 1] == ':' && part_ok(s, c - 1);
}

static bool is_hostname(const char *s, size_t n)
{
    return !match_addr(s, n, match_ipv4_part) && match_addr(s, n, match_host_part);
}

/* NetworkAddress::parse. s is NUL-terminated at n. */
static int parse_ip(const char *s, size_t n, cfdb_coordinator *c)
{
    if (n == 0 || memchr(s, 0, n))
        return INVALID; /* an embedded NUL never survives libfdb_c's whole-string checks */
    char buf[256];
    if (n >= sizeof buf)
        return INVALID;
    memcpy(buf, s, n);
    buf[n] = 0;
    memset(c, 0, sizeof *c);
    char *fh = strstr(buf, "(fromHostname)");
    if (fh) {
        c->addr.fromHostname = true;
        *fh = 0;
    }
    size_t fl = strlen(buf);
    if (fl > 4 && strcmp(buf + fl - 4, ":tls") == 0) {
        c->tls = true;
        c->addr.flags |= CFDB_ADDR_FLAG_TLS;
        buf[fl - 4] = 0;
        fl -= 4;
    }
    if (buf[0] == '[') {
        char *close = strchr(buf, ']');
        if (!close || close[1] != ':')
            return INVALID;
        /* std::stoi: optional sign then digits; the rest is ignored */
        char *p = close + 2;
        char *endp;
        errno = 0;
        long port = strtol(p, &endp, 10);
        if (endp == p || errno == ERANGE || port > 2147483647L || port < -2147483647L - 1)
            return INVALID;
        *close = 0;
        const char *inner = buf + 1;
        struct in6_addr a6;
        struct in_addr a4;
        if (inet_pton(AF_INET6, inner, &a6) == 1) {
            memcpy(c->v6, &a6, 16);
            c->addr.ip.tag = 2;
            c->addr.ip.v6.count = 16;
        } else if (inet_pton(AF_INET, inner, &a4) == 1) {
            c->addr.ip.tag = 1;
            c->addr.ip.v4 = ntohl(a4.s_addr);
        } else {
            return INVALID;
        }
        c->addr.port = (uint16_t)port;
        return 0;
    }
    int a, b, cc, d, port, count = -1;
    if (sscanf(buf, "%d.%d.%d.%d:%d%n", &a, &b, &cc, &d, &port, &count) < 5 || count != (int)fl)
        return INVALID;
    c->addr.ip.tag = 1;
    c->addr.ip.v4 = ((uint32_t)a << 24) + ((uint32_t)b << 16) + ((uint32_t)cc << 8) + (uint32_t)d;
    c->addr.port = (uint16_t)port;
    return 0;
}

static bool same_ip(const cfdb_coordinator *x, const cfdb_coordinator *y)
{
    if (x->addr.port != y->addr.port || x->addr.flags != y->addr.flags || x->addr.ip.tag != y->addr.ip.tag)
        return false;
    if (x->addr.ip.tag == 1)
        return x->addr.ip.v4 == y->addr.ip.v4;
    return memcmp(x->v6, y->v6, 16) == 0;
}

static bool same_host(const cfdb_coordinator *x, const cfdb_coordinator *y)
{
    return x->tls == y->tls && strcmp(x->host, y->host) == 0 && strcmp(x->service, y->service) == 0;
}

static void fix_v6_pointers(cfdb_cluster_string *cs)
{
    for (size_t i = 0; i < cs->count; i++) {
        cfdb_coordinator *c = &cs->coords[i];
        c->addr.ip.v6.items = (!c->is_hostname && c->addr.ip.tag == 2) ? c->v6 : NULL;
        if (c->addr.ip.tag != 2)
            c->addr.ip.v6.count = 0;
    }
}

int cfdb_cluster_string_parse(const char *text, size_t len, cfdb_cluster_string *out)
{
    memset(out, 0, sizeof *out);
    size_t n;
    char *t = trim(text, len, &n);
    if (!t)
        return CFDB_ERR_UNKNOWN_ERROR; /* out of memory */
    int rc = INVALID;
    cfdb_coordinator *ips = NULL, *hosts = NULL;
    size_t n_ips = 0, n_hosts = 0;

    char *at = memchr(t, '@', n);
    if (!at)
        goto fail;
    size_t klen = (size_t)(at - t);
    char *colon = memchr(t, ':', klen);
    if (!colon)
        goto fail;
    for (char *p = t; p < colon; p++)
        if (!(is_alnum(*p) || *p == '_'))
            goto fail;
    for (char *p = colon + 1; p < at; p++)
        if (!is_alnum(*p))
            goto fail;

    const char *addrs = at + 1;
    size_t alen = n - klen - 1;
    size_t max_items = 1;
    for (size_t i = 0; i < alen; i++)
        max_items += addrs[i] == ',';
    ips = calloc(max_items, sizeof *ips);
    hosts = calloc(max_items, sizeof *hosts);
    if (!ips || !hosts) {
        rc = -1;
        goto fail;
    }
    for (size_t p = 0; p <= alen;) {
        const char *comma = memchr(addrs + p, ',', alen - p);
        size_t q = comma ? (size_t)(comma - addrs) : alen;
        const char *a = addrs + p;
        size_t al = q - p;
        if (al > 0 && is_hostname(a, al)) {
            cfdb_coordinator h;
            memset(&h, 0, sizeof h);
            h.is_hostname = true;
            size_t fl = al;
            if (al > 4 && memcmp(a + al - 4, ":tls", 4) == 0) {
                h.tls = true;
                fl -= 4;
            }
            const char *c1 = memchr(a, ':', fl);
            h.host = dupn(a, (size_t)(c1 - a));
            h.service = dupn(c1 + 1, fl - (size_t)(c1 - a) - 1);
            if (!h.host || !h.service) {
                free(h.host);
                free(h.service);
                rc = -1;
                goto fail;
            }
            for (size_t i = 0; i < n_hosts; i++) {
                if (same_host(&hosts[i], &h)) {
                    free(h.host);
                    free(h.service);
                    goto fail;
                }
            }
            hosts[n_hosts++] = h;
        } else {
            cfdb_coordinator c;
            if (parse_ip(a, al, &c))
                goto fail;
            for (size_t i = 0; i < n_ips; i++)
                if (same_ip(&ips[i], &c))
                    goto fail;
            ips[n_ips++] = c;
        }
        p = q + 1;
    }
    if (n_ips + n_hosts == 0)
        goto fail;

    out->key = dupn(t, klen);
    out->description = dupn(t, (size_t)(colon - t));
    out->id = dupn(colon + 1, (size_t)(at - colon - 1));
    out->coords = calloc(n_ips + n_hosts, sizeof *out->coords);
    if (!out->key || !out->description || !out->id || !out->coords) {
        rc = -1;
        goto fail;
    }
    memcpy(out->coords, ips, n_ips * sizeof *ips);
    memcpy(out->coords + n_ips, hosts, n_hosts * sizeof *hosts);
    out->n_ip = n_ips;
    out->count = n_ips + n_hosts;
    fix_v6_pointers(out);
    free(ips);
    free(hosts);
    free(t);
    return 0;
fail:
    for (size_t i = 0; i < n_hosts; i++) {
        free(hosts[i].host);
        free(hosts[i].service);
    }
    free(ips);
    free(hosts);
    free(t);
    out->count = 0; /* coords not yet owned */
    cfdb_cluster_string_free(out);
    return rc;
}

int cfdb_cluster_string_copy(cfdb_cluster_string *dst, const cfdb_cluster_string *src)
{
    memset(dst, 0, sizeof *dst);
    dst->key = strdup(src->key);
    dst->description = strdup(src->description);
    dst->id = strdup(src->id);
    dst->coords = calloc(src->count ? src->count : 1, sizeof *dst->coords);
    if (!dst->key || !dst->description || !dst->id || !dst->coords)
        goto oom;
    for (size_t i = 0; i < src->count; i++) {
        dst->coords[i] = src->coords[i];
        dst->coords[i].host = NULL;
        dst->coords[i].service = NULL;
        dst->count = i + 1;
        if (src->coords[i].is_hostname) {
            dst->coords[i].host = strdup(src->coords[i].host);
            dst->coords[i].service = strdup(src->coords[i].service);
            if (!dst->coords[i].host || !dst->coords[i].service)
                goto oom;
        }
    }
    dst->n_ip = src->n_ip;
    fix_v6_pointers(dst);
    return 0;
oom:
    cfdb_cluster_string_free(dst);
    return CFDB_ERR_UNKNOWN_ERROR; /* out of memory */
}

size_t cfdb_coordinator_format(const cfdb_coordinator *c, char *buf, size_t cap)
{
    int n;
    if (c->is_hostname) {
        n = snprintf(buf, cap, "%s:%s%s", c->host, c->service, c->tls ? ":tls" : "");
    } else if (c->addr.ip.tag == 2) {
        char t[INET6_ADDRSTRLEN];
        inet_ntop(AF_INET6, c->v6, t, sizeof t);
        n = snprintf(buf, cap, "[%s]:%d%s%s", t, (int)c->addr.port, (c->addr.flags & CFDB_ADDR_FLAG_TLS) ? ":tls" : "",
                     c->addr.fromHostname ? "(fromHostname)" : "");
    } else {
        uint32_t v = c->addr.ip.v4;
        n = snprintf(buf, cap, "%d.%d.%d.%d:%d%s%s", (int)(v >> 24), (int)((v >> 16) & 255),
                     (int)((v >> 8) & 255), (int)(v & 255), (int)c->addr.port,
                     (c->addr.flags & CFDB_ADDR_FLAG_TLS) ? ":tls" : "",
                     c->addr.fromHostname ? "(fromHostname)" : "");
    }
    return n < 0 ? 0 : (size_t)n;
}

char *cfdb_cluster_string_format(const cfdb_cluster_string *cs)
{
    size_t need = strlen(cs->key) + 2;
    for (size_t i = 0; i < cs->count; i++)
        need += cfdb_coordinator_format(&cs->coords[i], NULL, 0) + 1;
    char *s = malloc(need);
    if (!s)
        return NULL;
    size_t pos = (size_t)snprintf(s, need, "%s@", cs->key);
    for (size_t i = 0; i < cs->count; i++) {
        if (i)
            s[pos++] = ',';
        pos += cfdb_coordinator_format(&cs->coords[i], s + pos, need - pos);
    }
    s[pos] = 0;
    return s;
}

bool cfdb_cluster_string_equal(const cfdb_cluster_string *a, const cfdb_cluster_string *b)
{
    char *x = cfdb_cluster_string_format(a), *y = cfdb_cluster_string_format(b);
    bool eq = x && y && strcmp(x, y) == 0;
    free(x);
    free(y);
    return eq;
}

static bool file_exists(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return false;
    fclose(f);
    return true;
}

char *cfdb_cluster_file_locate(const char *path, bool *is_default)
{
    if (is_default)
        *is_default = false;
    if (path && path[0])
        return strdup(path);
    const char *env = getenv(CFDB_CLUSTER_FILE_ENV);
    if (env)
        return strdup(env);
    if (is_default)
        *is_default = true;
    if (file_exists("fdb.cluster"))
        return strdup("fdb.cluster");
    return strdup(CFDB_DEFAULT_CLUSTER_FILE);
}

int cfdb_cluster_file_read(const char *path, cfdb_cluster_string *out)
{
    memset(out, 0, sizeof *out);
    FILE *f = path[0] ? fopen(path, "rb") : NULL;
    if (!f)
        return CFDB_ERR_NO_CLUSTER_FILE_FOUND;
    struct stat st;
    if (fstat(fileno(f), &st) != 0) {
        fclose(f);
        return CFDB_ERR_NO_CLUSTER_FILE_FOUND;
    }
    if (st.st_size > CFDB_MAX_CLUSTER_FILE_BYTES) {
        fclose(f);
        return CFDB_ERR_FILE_TOO_LARGE;
    }
    char buf[CFDB_MAX_CLUSTER_FILE_BYTES + 1];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    if (n > CFDB_MAX_CLUSTER_FILE_BYTES)
        return CFDB_ERR_FILE_TOO_LARGE;
    return cfdb_cluster_string_parse(buf, n, out);
}

int cfdb_cluster_file_open(const char *path, cfdb_cluster_string *out, char **resolved_path)
{
    char *p = cfdb_cluster_file_locate(path, NULL);
    if (resolved_path)
        *resolved_path = p;
    if (!p) {
        memset(out, 0, sizeof *out);
        return CFDB_ERR_UNKNOWN_ERROR; /* out of memory */
    }
    int rc = cfdb_cluster_file_read(p, out);
    if (!resolved_path)
        free(p);
    return rc;
}

char *cfdb_cluster_file_contents(const cfdb_cluster_string *cs)
{
    char *s = cfdb_cluster_string_format(cs);
    if (!s)
        return NULL;
    size_t need = sizeof header - 1 + strlen(s) + 2;
    char *all = malloc(need);
    if (all)
        snprintf(all, need, "%s%s\n", header, s);
    free(s);
    return all;
}

int cfdb_cluster_file_write(const char *path, const cfdb_cluster_string *cs)
{
    char *contents = cfdb_cluster_file_contents(cs);
    if (!contents)
        return CFDB_ERR_IO_ERROR;
    size_t plen = strlen(path);
    char *tmp = malloc(plen + 64);
    if (!tmp) {
        free(contents);
        return CFDB_ERR_IO_ERROR;
    }
    /* temporary file next to the target so that rename stays on one file system */
    const char *slash = strrchr(path, '/');
    size_t dirlen = slash ? (size_t)(slash - path) + 1 : 0;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    snprintf(tmp, plen + 64, "%.*s.%ld.%ld.%ld.tmp", (int)dirlen, path, (long)getpid(), (long)ts.tv_sec,
             (long)ts.tv_nsec);
    int rc = CFDB_ERR_IO_ERROR;
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd >= 0) {
        size_t len = strlen(contents), off = 0;
        bool ok = true;
        while (off < len) {
            ssize_t w = write(fd, contents + off, len - off);
            if (w < 0) {
                if (errno == EINTR)
                    continue;
                ok = false;
                break;
            }
            off += (size_t)w;
        }
        if (fsync(fd) != 0)
            ok = false;
        if (close(fd) != 0)
            ok = false;
        if (ok && rename(tmp, path) == 0)
            rc = 0;
        else
            unlink(tmp);
    }
    free(tmp);
    free(contents);
    return rc;
}

bool cfdb_cluster_file_up_to_date(const char *path, const cfdb_cluster_string *cs)
{
    cfdb_cluster_string f;
    if (cfdb_cluster_file_read(path, &f))
        return false;
    bool eq = cfdb_cluster_string_equal(&f, cs);
    cfdb_cluster_string_free(&f);
    return eq;
}
