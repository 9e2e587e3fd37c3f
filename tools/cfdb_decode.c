/* cfdb-decode: prints FoundationDB 7.3 frames and messages as readable text.
 *
 *   cfdb-decode [options] [FILE]        binary or hex input (FILE or stdin)
 *   cfdb-decode --jsonl CAPTURE.frames.jsonl
 *
 * Input is recognised as a whole connection stream (ConnectPacket then frames), one or more
 * frames, or a bare message; hex input may contain spaces and newlines. */
#include <ctype.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "connect_packet.h"
#include "frame.h"
#include "messages.h"
#include "protocol_version.h"

typedef struct options {
    const char *type;   /* force a message type */
    bool hex_bytes;     /* print strings as hex */
    bool no_checksum;   /* frames without XXH3 (TLS) */
    bool raw;           /* the input is a bare message */
} options;

static void usage(FILE *f)
{
    fputs("usage: cfdb-decode [options] [FILE]\n"
          "       cfdb-decode --jsonl CAPTURE.frames.jsonl [options]\n"
          "Decodes FoundationDB 7.3 wire data: a connection stream (ConnectPacket + frames),\n"
          "frames (u32 length, u64 XXH3, token, message) or a bare ObjectSerializer message.\n"
          "Input is binary, or hex text (whitespace ignored). Without FILE, reads stdin.\n"
          "  -t, --type NAME     decode as this message (e.g. GetKeyValuesRequest,\n"
          "                      ErrorOr<GetValueReply>); default: by file identifier\n"
          "  -m, --message       input is a bare message (no frame header, no token)\n"
          "  -n, --no-checksum   frames carry no checksum (TLS connections)\n"
          "  -x, --hex-bytes     print keys and values as hex\n"
          "  -j, --jsonl FILE    decode every frame of a golden *.frames.jsonl capture\n"
          "  -l, --list          list the known message types\n"
          "  -h, --help\n",
          f);
}

static int hexval(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    c = tolower(c);
    return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Converts hex text in place; returns -1 if the data is not hex text. */
static long hex_to_bin(uint8_t *buf, size_t len)
{
    size_t out = 0;
    int hi = -1;
    for (size_t i = 0; i < len; i++) {
        if (isspace(buf[i]))
            continue;
        int v = hexval(buf[i]);
        if (v < 0)
            return -1;
        if (hi < 0) {
            hi = v;
        } else {
            buf[out++] = (uint8_t)(hi << 4 | v);
            hi = -1;
        }
    }
    return hi < 0 ? (long)out : -1;
}

static uint8_t *read_all(FILE *f, size_t *len)
{
    size_t cap = 1 << 16, n = 0;
    uint8_t *buf = malloc(cap);
    for (;;) {
        if (!buf)
            return NULL;
        size_t r = fread(buf + n, 1, cap - n, f);
        n += r;
        if (r == 0)
            break;
        if (n == cap) {
            cap *= 2;
            uint8_t *nb = realloc(buf, cap);
            if (!nb)
                free(buf);
            buf = nb;
        }
    }
    *len = n;
    return buf;
}

static int print_message(const options *o, const uint8_t *msg, size_t len, const char *indent_hint)
{
    const fb_message *m = o->type ? cfdb_message_by_name(o->type) : cfdb_message_by_file_id(fb_peek_file_id(msg, len));
    if (!m) {
        printf("%sunknown message: file identifier %u, %zu bytes\n", indent_hint, fb_peek_file_id(msg, len), len);
        return 1;
    }
    cfdb_arena arena;
    cfdb_arena_init(&arena);
    void *item = calloc(1, m->item->csize ? m->item->csize : 1);
    cfdb_reply_error err = 0;
    int rc = fb_decode(m, msg, len, item, &err, &arena);
    fb_printer pr = { stdout, 1, o->hex_bytes };
    if (rc) {
        printf("%s%s: decode failed with error %d\n", indent_hint, m->name, rc);
    } else {
        fb_print_message(&pr, m, item, err);
    }
    free(item);
    cfdb_arena_free(&arena);
    return rc ? 1 : 0;
}

static void print_token(cfdb_uid token)
{
    char buf[33];
    printf("frame to token %s", cfdb_uid_format(token, buf));
    if (token.first == UINT64_MAX)
        printf(" (well-known %llu)", (unsigned long long)token.second);
    putchar('\n');
}

static int decode_frames(const options *o, const uint8_t *buf, size_t len)
{
    int bad = 0;
    size_t at = 0;
    while (at < len) {
        cfdb_frame f;
        size_t n;
        int rc = cfdb_frame_parse(buf + at, len - at, !o->no_checksum, &f, &n);
        if (rc) {
            printf("bad frame at offset %zu: error %d%s\n", at, rc,
                   rc == 1520 ? " (checksum_failed)" : rc == 1500 ? " (bad length)" : "");
            return 1;
        }
        if (n == 0) {
            printf("truncated frame: %zu bytes left\n", len - at);
            return 1;
        }
        print_token(f.token);
        bad |= print_message(o, f.msg, f.msg_len, "  ");
        at += n;
    }
    return bad;
}

static int decode_buffer(const options *o, const uint8_t *buf, size_t len)
{
    if (o->raw)
        return print_message(o, buf, len, "");
    /* A connection stream starts with a 40-byte ConnectPacket body. */
    cfdb_connect_packet cp;
    size_t used;
    if (len >= CFDB_CONNECT_PACKET_SIZE && buf[0] == 40 && buf[1] == 0 && buf[2] == 0 && buf[3] == 0 &&
        cfdb_connect_packet_decode(buf, len, &cp, &used) == 0 && used > 0 &&
        (cp.protocol_version & 0xFFFFFFFF00000000ull) == (CFDB_PROTOCOL_CONNECT_VERSION & 0xFFFFFFFF00000000ull)) {
        printf("ConnectPacket { protocolVersion: 0x%016llx, canonicalRemotePort: %u, connectionId: %llu, "
               "canonicalRemoteIp4: %u.%u.%u.%u, flags: %u }\n",
               (unsigned long long)cp.protocol_version, cp.canonical_port, (unsigned long long)cp.connection_id,
               cp.canonical_ip4 >> 24, (cp.canonical_ip4 >> 16) & 255, (cp.canonical_ip4 >> 8) & 255,
               cp.canonical_ip4 & 255, cp.flags);
        return decode_frames(o, buf + CFDB_CONNECT_PACKET_SIZE, len - CFDB_CONNECT_PACKET_SIZE);
    }
    /* A frame's length word covers exactly the rest of a (first) frame. */
    cfdb_frame f;
    if (cfdb_frame_parse(buf, len, !o->no_checksum, &f, &used) == 0 && used > 0)
        return decode_frames(o, buf, len);
    return print_message(o, buf, len, "");
}

/* Minimal reader for the golden captures: one JSON object per line with "kind", "dir",
 * "token" and "hex" string fields. */
static char *json_string_field(const char *line, const char *name)
{
    char key[64];
    snprintf(key, sizeof key, "\"%s\": \"", name);
    const char *p = strstr(line, key);
    if (!p) {
        snprintf(key, sizeof key, "\"%s\":\"", name);
        p = strstr(line, key);
        if (!p)
            return NULL;
    }
    p += strlen(key);
    const char *e = strchr(p, '"');
    if (!e)
        return NULL;
    return strndup(p, (size_t)(e - p));
}

static int decode_jsonl(const options *o, const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        perror(path);
        return 2;
    }
    char *line = NULL;
    size_t cap = 0;
    int bad = 0, n = 0;
    while (getline(&line, &cap, f) > 0) {
        char *kind = json_string_field(line, "kind"), *dir = json_string_field(line, "dir");
        char *token = json_string_field(line, "token"), *hex = json_string_field(line, "hex");
        if (kind && strcmp(kind, "frame") == 0 && hex) {
            size_t hl = strlen(hex);
            long bl = hex_to_bin((uint8_t *)hex, hl);
            printf("#%d %s token %s\n", n++, dir ? dir : "?", token ? token : "?");
            if (bl < 0) {
                puts("  bad hex");
                bad = 1;
            } else {
                bad |= print_message(o, (uint8_t *)hex, (size_t)bl, "  ");
            }
        }
        free(kind);
        free(dir);
        free(token);
        free(hex);
    }
    free(line);
    fclose(f);
    return bad;
}

int main(int argc, char **argv)
{
    options o = { 0 };
    const char *jsonl = NULL;
    static const struct option longopts[] = {
        { "type", required_argument, 0, 't' }, { "message", no_argument, 0, 'm' },
        { "no-checksum", no_argument, 0, 'n' }, { "hex-bytes", no_argument, 0, 'x' },
        { "jsonl", required_argument, 0, 'j' }, { "list", no_argument, 0, 'l' },
        { "help", no_argument, 0, 'h' }, { 0, 0, 0, 0 },
    };
    int c;
    while ((c = getopt_long(argc, argv, "t:mnxj:lh", longopts, NULL)) != -1) {
        switch (c) {
        case 't': o.type = optarg; break;
        case 'm': o.raw = true; break;
        case 'n': o.no_checksum = true; break;
        case 'x': o.hex_bytes = true; break;
        case 'j': jsonl = optarg; break;
        case 'l':
            for (unsigned i = 0; i < cfdb_all_messages_count; i++)
                printf("%10u  %s\n", cfdb_all_messages[i]->file_id, cfdb_all_messages[i]->name);
            return 0;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (o.type && !cfdb_message_by_name(o.type)) {
        fprintf(stderr, "cfdb-decode: unknown message type '%s' (see --list)\n", o.type);
        return 2;
    }
    if (jsonl)
        return decode_jsonl(&o, jsonl);

    FILE *in = stdin;
    if (optind < argc && !(in = fopen(argv[optind], "rb"))) {
        perror(argv[optind]);
        return 2;
    }
    size_t len;
    uint8_t *buf = read_all(in, &len);
    if (in != stdin)
        fclose(in);
    if (!buf) {
        fputs("cfdb-decode: out of memory\n", stderr);
        return 2;
    }
    long bl = hex_to_bin(buf, len);
    /* keep binary input as is when it was not hex text */
    if (bl < 0) {
        free(buf);
        in = optind < argc ? fopen(argv[optind], "rb") : NULL;
        buf = in ? read_all(in, &len) : NULL;
        if (in)
            fclose(in);
        if (!buf) {
            fputs("cfdb-decode: binary input must come from a file\n", stderr);
            return 2;
        }
    } else {
        len = (size_t)bl;
    }
    int rc = decode_buffer(&o, buf, len);
    free(buf);
    return rc;
}
