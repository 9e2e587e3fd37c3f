/* Test support: the golden captures under tests/vectors/golden (real libfdb_c 7.3.77 <->
 * fdbserver 7.3.77 traffic): frames from *.frames.jsonl and TCP streams from *.pcap. */
#ifndef CFDB_TEST_GOLDEN_H
#define CFDB_TEST_GOLDEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "uid.h"

typedef struct golden_frame {
    int conn;
    bool c2s;
    cfdb_uid token;
    uint8_t *msg;
    size_t len;
} golden_frame;

typedef struct golden_capture {
    golden_frame *frames;
    size_t count;
} golden_capture;

/* Scenario names present in the vectors folder, NULL-terminated; free with golden_free_names. */
char **golden_scenarios(void);
void golden_free_names(char **names);

int golden_load_frames(const char *scenario, golden_capture *out);
/* The same for any file in that format (e.g. cfdb-server --trace-frames). */
int golden_load_frames_path(const char *path, golden_capture *out);
void golden_free(golden_capture *c);

/* One TCP direction of a capture, reassembled. */
typedef struct golden_stream {
    uint16_t src_port, dst_port;
    uint8_t *data;
    size_t len;
} golden_stream;

/* Reads NAME.pcap and returns every TCP direction that carried payload. */
int golden_load_streams(const char *scenario, golden_stream **streams, size_t *count);
void golden_free_streams(golden_stream *streams, size_t count);

/* Reads a results.jsonl line's string field into buf (hex stays hex); returns false if absent. */
bool golden_json_field(const char *line, const char *name, char *buf, size_t cap);
/* Hex text to bytes; returns the byte count or -1. */
long golden_unhex(const char *hex, uint8_t *out, size_t cap);

#endif
