/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cfdb-bench: the sealed manifest. Written before any timing; its SHA-256
 * is printed, stored next to it (manifest.sha256, sha256sum format) and
 * recorded in every run file, so results can be tied to exactly one design.
 */
#ifndef CFDB_BENCH_MANIFEST_H
#define CFDB_BENCH_MANIFEST_H

#include <stddef.h>

#include "campaign.h"

/* Significant digits of the real numbers in manifest.json and results.json. */
#define BENCH_JSON_REAL_DIGITS 12

#define BENCH_MANIFEST_FORMAT "cfdb-bench-manifest/1"

/* Write DIR/manifest.json and DIR/manifest.sha256; the digest goes into
 * c->manifest_sha256. Returns 0 or -1. */
int bench_manifest_write(bench_campaign *c, const char *dir, char *err, size_t errlen);

/* Recompute the digest of DIR/manifest.json and compare with
 * DIR/manifest.sha256. Returns 0 when sealed and intact, else -1 with a reason. */
int bench_manifest_verify(const char *dir, char sha_out[BENCH_SHA256_HEX], char *err, size_t errlen);

/* Read the design back from DIR/manifest.json (arms, workloads, levels,
 * blocks, orders, seeds, gates, bootstrap settings). Returns 0 or -1. */
int bench_manifest_load(const char *dir, bench_campaign *c, char *err, size_t errlen);

#endif
