#include "golden.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int hexval(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

long golden_unhex(const char *hex, uint8_t *out, size_t cap)
{
    size_t n = strlen(hex);
    if (n % 2 || n / 2 > cap)
        return -1;
    for (size_t i = 0; i < n / 2; i++) {
        int a = hexval(hex[2 * i]), b = hexval(hex[2 * i + 1]);
        if (a < 0 || b < 0)
            return -1;
        out[i] = (uint8_t)(a << 4 | b);
    }
    return (long)(n / 2);
}

bool golden_json_field(const char *line, const char *name, char *buf, size_t cap)
{
    char key[64];
    snprintf(key, sizeof key, "\"%s\":", name);
    const char *p = strstr(line, key);
    if (!p)
        return false;
    p += strlen(key);
    while (*p == ' ')
        p++;
    const char *e;
    if (*p == '"') {
        p++;
        e = strchr(p, '"');
    } else {
        e = p + strcspn(p, ",}");
    }
    if (!e || (size_t)(e - p) >= cap)
        return false;
    memcpy(buf, p, (size_t)(e - p));
    buf[e - p] = 0;
    return true;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

char **golden_scenarios(void)
{
    DIR *d = opendir(CFDB_VECTORS_DIR "/golden");
    if (!d)
        return NULL;
    char **names = calloc(64, sizeof *names);
    size_t n = 0;
    struct dirent *e;
    const char *suffix = ".frames.jsonl";
    while ((e = readdir(d)) && n < 63) {
        size_t l = strlen(e->d_name), sl = strlen(suffix);
        if (l > sl && strcmp(e->d_name + l - sl, suffix) == 0)
            names[n++] = strndup(e->d_name, l - sl);
    }
    closedir(d);
    qsort(names, n, sizeof *names, by_name);
    return names;
}

void golden_free_names(char **names)
{
    for (size_t i = 0; names && names[i]; i++)
        free(names[i]);
    free(names);
}

int golden_load_frames(const char *scenario, golden_capture *out)
{
    char path[512];
    snprintf(path, sizeof path, "%s/golden/%s.frames.jsonl", CFDB_VECTORS_DIR, scenario);
    return golden_load_frames_path(path, out);
}

int golden_load_frames_path(const char *path, golden_capture *out)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    memset(out, 0, sizeof *out);
    size_t cap = 0;
    char *line = NULL;
    size_t lcap = 0;
    char *field = malloc(1 << 20);
    while (getline(&line, &lcap, f) > 0) {
        if (!golden_json_field(line, "kind", field, 1 << 20) || strcmp(field, "frame") != 0)
            continue;
        if (out->count == cap) {
            cap = cap ? cap * 2 : 64;
            out->frames = realloc(out->frames, cap * sizeof *out->frames);
        }
        golden_frame *g = &out->frames[out->count++];
        memset(g, 0, sizeof *g);
        golden_json_field(line, "conn", field, 1 << 20);
        g->conn = atoi(field);
        golden_json_field(line, "dir", field, 1 << 20);
        g->c2s = strcmp(field, "c2s") == 0;
        golden_json_field(line, "token", field, 1 << 20);
        cfdb_uid_parse(field, &g->token);
        golden_json_field(line, "hex", field, 1 << 20);
        g->msg = malloc(strlen(field) / 2 + 1);
        long n = golden_unhex(field, g->msg, strlen(field) / 2 + 1);
        g->len = n < 0 ? 0 : (size_t)n;
    }
    free(field);
    free(line);
    fclose(f);
    return 0;
}

void golden_free(golden_capture *c)
{
    for (size_t i = 0; i < c->count; i++)
        free(c->frames[i].msg);
    free(c->frames);
    memset(c, 0, sizeof *c);
}

static uint16_t be16(const uint8_t *p)
{
    return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

typedef struct stream_state {
    golden_stream s;
    size_t cap;
    uint32_t next_seq;
    bool started;
} stream_state;

int golden_load_streams(const char *scenario, golden_stream **streams, size_t *count)
{
    char path[512];
    snprintf(path, sizeof path, "%s/golden/%s.pcap", CFDB_VECTORS_DIR, scenario);
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    uint8_t gh[24];
    if (fread(gh, 1, 24, f) != 24) {
        fclose(f);
        return -1;
    }
    uint32_t link;
    memcpy(&link, gh + 20, 4);
    stream_state st[16];
    size_t n = 0;
    memset(st, 0, sizeof st);
    uint8_t rh[16];
    static uint8_t pkt[262144];
    while (fread(rh, 1, 16, f) == 16) {
        uint32_t caplen;
        memcpy(&caplen, rh + 8, 4);
        if (caplen > sizeof pkt || fread(pkt, 1, caplen, f) != caplen)
            break;
        size_t off = link == 1 ? 14 : link == 113 ? 16 : 0; /* Ethernet, Linux cooked */
        if (caplen < off + 20 || (pkt[off] >> 4) != 4 || pkt[off + 9] != 6)
            continue;
        size_t ihl = (size_t)(pkt[off] & 15) * 4;
        size_t ip_total = be16(pkt + off + 2);
        const uint8_t *tcp = pkt + off + ihl;
        size_t tcp_len = ip_total - ihl;
        size_t doff = (size_t)(tcp[12] >> 4) * 4;
        if (tcp_len < doff)
            continue;
        size_t plen = tcp_len - doff;
        uint16_t sp = be16(tcp), dp = be16(tcp + 2);
        uint32_t seq = be32(tcp + 4);
        if (plen == 0)
            continue;
        stream_state *s = NULL;
        for (size_t i = 0; i < n; i++)
            if (st[i].s.src_port == sp && st[i].s.dst_port == dp)
                s = &st[i];
        if (!s) {
            if (n == 16)
                continue;
            s = &st[n++];
            s->s.src_port = sp;
            s->s.dst_port = dp;
        }
        const uint8_t *payload = tcp + doff;
        if (s->started) {
            int32_t delta = (int32_t)(seq - s->next_seq);
            if (delta < 0) { /* retransmission overlap */
                if ((size_t)-delta >= plen)
                    continue;
                payload += -delta;
                plen -= (size_t)-delta;
                seq = s->next_seq;
            }
        }
        if (s->s.len + plen > s->cap) {
            s->cap = (s->s.len + plen) * 2;
            s->s.data = realloc(s->s.data, s->cap);
        }
        memcpy(s->s.data + s->s.len, payload, plen);
        s->s.len += plen;
        s->next_seq = seq + (uint32_t)plen;
        s->started = true;
    }
    fclose(f);
    *streams = calloc(n ? n : 1, sizeof **streams);
    for (size_t i = 0; i < n; i++)
        (*streams)[i] = st[i].s;
    *count = n;
    return 0;
}

void golden_free_streams(golden_stream *streams, size_t count)
{
    for (size_t i = 0; i < count; i++)
        free(streams[i].data);
    free(streams);
}
