/* SPDX-License-Identifier: Apache-2.0 */
#include "manifest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze.h"
#include "bootstrap.h"
#include "json_reader.h"
#include "json_writer.h"
#include "machine.h"
#include "paths.h"

int bench_manifest_write(bench_campaign *c, const char *dir, char *err, size_t errlen)
{
    char path[BENCH_PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/manifest.json", dir);
    FILE *f = fopen(path, "w");
    if (!f) {
        snprintf(err, errlen, "cannot write %s", path);
        return -1;
    }
    cfdb_json j;
    cfdb_json_init_pretty(&j);
    cfdb_json_begin_object(&j);
    cfdb_json_key(&j, "format"); cfdb_json_string(&j, BENCH_MANIFEST_FORMAT);
    cfdb_json_key(&j, "tool");
    cfdb_json_begin_object(&j);
    cfdb_json_key(&j, "name"); cfdb_json_string(&j, "cfdb-bench");
    char self[BENCH_PATH_MAX], hex[BENCH_SHA256_HEX];
    if (bench_self_exe(self, sizeof self) == 0) {
        cfdb_json_key(&j, "binary"); cfdb_json_string(&j, self);
        cfdb_json_key(&j, "binary_sha256");
        if (bench_sha256_file(self, hex) == 0) cfdb_json_string(&j, hex); else cfdb_json_null(&j);
    }
    cfdb_json_end_object(&j);
    cfdb_json_key(&j, "created_utc"); cfdb_json_string(&j, c->created_utc);
    cfdb_json_key(&j, "command_line"); cfdb_json_string(&j, c->command_line);
    cfdb_json_key(&j, "api_version"); cfdb_json_int(&j, BENCH_FDB_API_VERSION);

    cfdb_json_key(&j, "arms");
    cfdb_json_begin_array(&j);
    for (int i = 0; i < c->narms; i++) {
        cfdb_json_begin_object(&j);
        cfdb_json_key(&j, "name"); cfdb_json_string(&j, c->arms[i].name);
        cfdb_json_key(&j, "kind"); cfdb_json_string(&j, c->arms[i].kind == BENCH_ARM_FLOOR ? "floor" : "library");
        cfdb_json_key(&j, "path"); cfdb_json_string(&j, c->arms[i].path);
        cfdb_json_key(&j, "sha256"); cfdb_json_string(&j, c->arms[i].sha256);
        cfdb_json_key(&j, "size_bytes"); cfdb_json_int(&j, c->arms[i].size);
        cfdb_json_end_object(&j);
    }
    cfdb_json_end_array(&j);
    cfdb_json_key(&j, "control_arm"); cfdb_json_string(&j, c->arms[c->control_arm].name);
    cfdb_json_key(&j, "floor_note"); cfdb_json_string(&j, c->floor_note);

    cfdb_json_key(&j, "target");
    cfdb_json_begin_object(&j);
    cfdb_json_key(&j, "cluster_file"); cfdb_json_string(&j, c->cluster_file);
    cfdb_json_key(&j, "managed_server"); cfdb_json_bool(&j, c->server_managed);
    cfdb_json_key(&j, "server_path"); cfdb_json_string(&j, c->server_managed ? c->server_path : NULL);
    cfdb_json_key(&j, "server_sha256"); cfdb_json_string(&j, c->server_managed ? c->server_sha256 : NULL);
    cfdb_json_end_object(&j);

    cfdb_json_key(&j, "keyspace");
    cfdb_json_begin_object(&j);
    cfdb_json_key(&j, "keys"); cfdb_json_int(&j, (int64_t)c->keys);
    cfdb_json_key(&j, "distribution"); cfdb_json_string(&j, "uniform");
    cfdb_json_key(&j, "layout"); cfdb_json_string(&j, "cfdb-bench/v100/%010u (100 B), cfdb-bench/v1000/%010u (1000 B)");
    cfdb_json_end_object(&j);

    cfdb_json_key(&j, "workloads");
    cfdb_json_begin_array(&j);
    for (int i = 0; i < c->nworkloads; i++) {
        cfdb_json_begin_object(&j);
        cfdb_json_key(&j, "name"); cfdb_json_string(&j, bench_workload_name(c->workloads[i]));
        cfdb_json_key(&j, "description"); cfdb_json_string(&j, bench_workload_describe(c->workloads[i]));
        cfdb_json_end_object(&j);
    }
    cfdb_json_end_array(&j);
    cfdb_json_key(&j, "levels");
    cfdb_json_begin_array(&j);
    for (int i = 0; i < c->nlevels; i++) {
        cfdb_json_begin_object(&j);
        cfdb_json_key(&j, "workers"); cfdb_json_int(&j, c->levels[i].workers);
        cfdb_json_key(&j, "warmup"); cfdb_json_int(&j, (int64_t)c->levels[i].warmup);
        cfdb_json_key(&j, "measured"); cfdb_json_int(&j, (int64_t)c->levels[i].measured);
        cfdb_json_end_object(&j);
    }
    cfdb_json_end_array(&j);
    cfdb_json_key(&j, "blocks_requested"); cfdb_json_int(&j, c->blocks_requested);
    cfdb_json_key(&j, "blocks"); cfdb_json_int(&j, c->blocks);
    cfdb_json_key(&j, "orders");
    cfdb_json_begin_array(&j);
    for (int b = 0; b < c->blocks; b++) {
        cfdb_json_begin_array(&j);
        for (int p = 0; p < c->narms; p++)
            cfdb_json_string(&j, c->arms[c->orders[b * c->narms + p]].name);
        cfdb_json_end_array(&j);
    }
    cfdb_json_end_array(&j);
    cfdb_json_key(&j, "seed"); cfdb_json_int(&j, (int64_t)c->seed);

    cfdb_json_key(&j, "gates");
    cfdb_json_begin_object(&j);
    cfdb_json_key(&j, "quiescence");
    cfdb_json_begin_object(&j);
    cfdb_json_key(&j, "enabled"); cfdb_json_bool(&j, c->quiet_enabled);
    cfdb_json_key(&j, "max_cpu"); cfdb_json_real(&j, c->quiet.max_cpu, BENCH_JSON_REAL_DIGITS);
    cfdb_json_key(&j, "max_aggregate"); cfdb_json_real(&j, c->quiet.max_agg, BENCH_JSON_REAL_DIGITS);
    cfdb_json_key(&j, "window_s"); cfdb_json_real(&j, c->quiet.window_s, BENCH_JSON_REAL_DIGITS);
    cfdb_json_key(&j, "wait_s"); cfdb_json_real(&j, c->quiet.wait_s, BENCH_JSON_REAL_DIGITS);
    cfdb_json_end_object(&j);
    cfdb_json_key(&j, "server_health");
    cfdb_json_begin_object(&j);
    cfdb_json_key(&j, "enabled"); cfdb_json_bool(&j, c->health_enabled);
    cfdb_json_key(&j, "required"); cfdb_json_bool(&j, c->health_required);
    cfdb_json_key(&j, "source"); cfdb_json_string(&j, "\\xff\\xff/status/json via the control arm");
    cfdb_json_key(&j, "max_log_queue_bytes"); cfdb_json_real(&j, c->health.max_log_queue_bytes, BENCH_JSON_REAL_DIGITS);
    cfdb_json_key(&j, "max_moving_bytes"); cfdb_json_real(&j, c->health.max_moving_bytes, BENCH_JSON_REAL_DIGITS);
    cfdb_json_end_object(&j);
    cfdb_json_end_object(&j);
    cfdb_json_key(&j, "run_timeout_s"); cfdb_json_real(&j, c->run_timeout_s, BENCH_JSON_REAL_DIGITS);
    cfdb_json_key(&j, "pinning");
    cfdb_json_begin_object(&j);
    cfdb_json_key(&j, "client_cpus"); if (c->client_cpus[0]) cfdb_json_string(&j, c->client_cpus); else cfdb_json_null(&j);
    cfdb_json_key(&j, "server_cpus"); if (c->server_cpus[0]) cfdb_json_string(&j, c->server_cpus); else cfdb_json_null(&j);
    cfdb_json_end_object(&j);

    cfdb_json_key(&j, "malloc_counter");
    if (c->malloc_lib[0]) {
        cfdb_json_begin_object(&j);
        cfdb_json_key(&j, "path"); cfdb_json_string(&j, c->malloc_lib);
        cfdb_json_key(&j, "sha256"); cfdb_json_string(&j, c->malloc_sha256);
        cfdb_json_end_object(&j);
    } else {
        cfdb_json_null(&j);
    }
    cfdb_json_key(&j, "metrics");
    cfdb_json_begin_array(&j);
    for (int i = 0; i < BENCH_NMETRICS; i++)
        cfdb_json_string(&j, bench_metric_names[i]);
    cfdb_json_end_array(&j);
    cfdb_json_key(&j, "estimation");
    cfdb_json_begin_object(&j);
    cfdb_json_key(&j, "ratio"); cfdb_json_string(&j, "per block, arm A / arm B");
    cfdb_json_key(&j, "summary"); cfdb_json_string(&j, "geometric mean of block ratios");
    cfdb_json_key(&j, "interval"); cfdb_json_string(&j, "percentile bootstrap over whole blocks");
    cfdb_json_key(&j, "bootstrap_resamples"); cfdb_json_int(&j, c->bootstrap_resamples);
    cfdb_json_key(&j, "bootstrap_seed"); cfdb_json_int(&j, (int64_t)c->bootstrap_seed);
    cfdb_json_key(&j, "confidence"); cfdb_json_real(&j, BENCH_BOOTSTRAP_CONFIDENCE, BENCH_JSON_REAL_DIGITS);
    cfdb_json_end_object(&j);
    cfdb_json_key(&j, "machine");
    bench_machine_json(&j);
    cfdb_json_end_object(&j);
    bool written = !j.failed && fwrite(j.buf, 1, j.len, f) == j.len;
    cfdb_json_free(&j);
    if (fclose(f) != 0 || !written) {
        snprintf(err, errlen, "cannot write %s", path);
        return -1;
    }
    if (bench_sha256_file(path, c->manifest_sha256) < 0) {
        snprintf(err, errlen, "cannot hash %s", path);
        return -1;
    }
    char spath[BENCH_PATH_MAX + 64];
    snprintf(spath, sizeof spath, "%s/manifest.sha256", dir);
    FILE *s = fopen(spath, "w");
    if (!s || fprintf(s, "%s  manifest.json\n", c->manifest_sha256) < 0 || fclose(s) != 0) {
        snprintf(err, errlen, "cannot write %s", spath);
        return -1;
    }
    return 0;
}

int bench_manifest_verify(const char *dir, char sha_out[BENCH_SHA256_HEX], char *err, size_t errlen)
{
    char path[BENCH_PATH_MAX + 64], spath[BENCH_PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/manifest.json", dir);
    snprintf(spath, sizeof spath, "%s/manifest.sha256", dir);
    char actual[BENCH_SHA256_HEX], sealed[BENCH_SHA256_HEX + 8] = {0};
    if (bench_sha256_file(path, actual) < 0) {
        snprintf(err, errlen, "cannot read %s", path);
        return -1;
    }
    FILE *s = fopen(spath, "r");
    if (!s) {
        snprintf(err, errlen, "manifest is not sealed: %s missing", spath);
        return -1;
    }
    int ok = fscanf(s, "%64s", sealed) == 1;
    fclose(s);
    if (!ok || strcmp(sealed, actual)) {
        snprintf(err, errlen, "manifest.json does not match its seal (sealed %s, now %s)",
                 ok ? sealed : "?", actual);
        return -1;
    }
    memcpy(sha_out, actual, BENCH_SHA256_HEX);
    return 0;
}

static int arm_index(const bench_campaign *c, const char *name)
{
    for (int i = 0; i < c->narms; i++)
        if (!strcmp(c->arms[i].name, name))
            return i;
    return -1;
}

int bench_manifest_load(const char *dir, bench_campaign *c, char *err, size_t errlen)
{
    memset(c, 0, sizeof *c);
    char path[BENCH_PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/manifest.json", dir);
    cfdb_jv *root = cfdb_jv_parse_file(path);
    if (!root) {
        snprintf(err, errlen, "cannot read %s as JSON", path);
        return -1;
    }
    int rc = -1;
    const char *fmt = cfdb_jv_path_string(root, "format");
    if (!fmt || strcmp(fmt, BENCH_MANIFEST_FORMAT)) {
        snprintf(err, errlen, "%s: not a %s document", path, BENCH_MANIFEST_FORMAT);
        goto out;
    }
    const cfdb_jv *arms = cfdb_jv_get(root, "arms");
    if (!arms || arms->type != JSON_ARRAY || arms->count < 1 || arms->count > BENCH_MAX_ARMS) {
        snprintf(err, errlen, "%s: bad arms", path);
        goto out;
    }
    for (size_t i = 0; i < arms->count; i++) {
        const char *n = cfdb_jv_path_string(arms->items[i], "name");
        const char *p = cfdb_jv_path_string(arms->items[i], "path");
        const char *h = cfdb_jv_path_string(arms->items[i], "sha256");
        if (!n) {
            snprintf(err, errlen, "%s: arm without a name", path);
            goto out;
        }
        snprintf(c->arms[i].name, sizeof c->arms[i].name, "%s", n);
        snprintf(c->arms[i].path, sizeof c->arms[i].path, "%s", p ? p : "");
        snprintf(c->arms[i].sha256, sizeof c->arms[i].sha256, "%s", h ? h : "");
        const char *k = cfdb_jv_path_string(arms->items[i], "kind");
        c->arms[i].kind = k && !strcmp(k, "floor") ? BENCH_ARM_FLOOR : BENCH_ARM_LIBRARY;
        double sz = 0;
        cfdb_jv_path_number(arms->items[i], "size_bytes", &sz);
        c->arms[i].size = (int64_t)sz;
    }
    c->narms = (int)arms->count;
    const char *fnote = cfdb_jv_path_string(root, "floor_note");
    snprintf(c->floor_note, sizeof c->floor_note, "%s", fnote ? fnote : "");
    const char *ctl = cfdb_jv_path_string(root, "control_arm");
    c->control_arm = ctl && arm_index(c, ctl) >= 0 ? arm_index(c, ctl) : 0;

    const cfdb_jv *wls = cfdb_jv_get(root, "workloads");
    for (size_t i = 0; wls && wls->type == JSON_ARRAY && i < wls->count && i < WL_COUNT; i++) {
        const char *n = cfdb_jv_path_string(wls->items[i], "name");
        int w = n ? bench_workload_parse(n) : -1;
        if (w < 0) {
            snprintf(err, errlen, "%s: unknown workload %s", path, n ? n : "?");
            goto out;
        }
        c->workloads[c->nworkloads++] = w;
    }
    const cfdb_jv *lv = cfdb_jv_get(root, "levels");
    for (size_t i = 0; lv && lv->type == JSON_ARRAY && i < lv->count && i < BENCH_MAX_LEVELS; i++) {
        double w = 0, wu = 0, m = 0;
        cfdb_jv_path_number(lv->items[i], "workers", &w);
        cfdb_jv_path_number(lv->items[i], "warmup", &wu);
        cfdb_jv_path_number(lv->items[i], "measured", &m);
        c->levels[c->nlevels].workers = (int)w;
        c->levels[c->nlevels].warmup = (uint64_t)wu;
        c->levels[c->nlevels].measured = (uint64_t)m;
        c->nlevels++;
    }
    double d;
    if (!cfdb_jv_path_number(root, "blocks", &d) || d < 1 || d > BENCH_MAX_BLOCKS) {
        snprintf(err, errlen, "%s: bad blocks", path);
        goto out;
    }
    c->blocks = (int)d;
    c->blocks_requested = cfdb_jv_path_number(root, "blocks_requested", &d) ? (int)d : c->blocks;
    const cfdb_jv *ord = cfdb_jv_get(root, "orders");
    if (!ord || ord->type != JSON_ARRAY || (int)ord->count != c->blocks) {
        snprintf(err, errlen, "%s: orders do not match blocks", path);
        goto out;
    }
    for (int b = 0; b < c->blocks; b++) {
        const cfdb_jv *o = ord->items[b];
        if (o->type != JSON_ARRAY || (int)o->count != c->narms) {
            snprintf(err, errlen, "%s: order %d has the wrong length", path, b);
            goto out;
        }
        for (int p = 0; p < c->narms; p++) {
            int a = o->items[p]->type == JSON_STRING ? arm_index(c, o->items[p]->text) : -1;
            if (a < 0) {
                snprintf(err, errlen, "%s: order %d names an unknown arm", path, b);
                goto out;
            }
            c->orders[b * c->narms + p] = a;
        }
    }
    if (cfdb_jv_path_number(root, "seed", &d))
        c->seed = (uint64_t)d;
    if (cfdb_jv_path_number(root, "keyspace.keys", &d))
        c->keys = (uint64_t)d;
    const char *cf = cfdb_jv_path_string(root, "target.cluster_file");
    snprintf(c->cluster_file, sizeof c->cluster_file, "%s", cf ? cf : "");
    const cfdb_jv *ms = cfdb_jv_path(root, "target.managed_server");
    c->server_managed = ms && ms->type == JSON_BOOL && ms->b;
    const cfdb_jv *qe = cfdb_jv_path(root, "gates.quiescence.enabled");
    c->quiet_enabled = qe && qe->type == JSON_BOOL && qe->b;
    cfdb_jv_path_number(root, "gates.quiescence.max_cpu", &c->quiet.max_cpu);
    cfdb_jv_path_number(root, "gates.quiescence.max_aggregate", &c->quiet.max_agg);
    cfdb_jv_path_number(root, "gates.quiescence.window_s", &c->quiet.window_s);
    cfdb_jv_path_number(root, "gates.quiescence.wait_s", &c->quiet.wait_s);
    const cfdb_jv *he = cfdb_jv_path(root, "gates.server_health.enabled");
    c->health_enabled = he && he->type == JSON_BOOL && he->b;
    const cfdb_jv *hr = cfdb_jv_path(root, "gates.server_health.required");
    c->health_required = hr && hr->type == JSON_BOOL && hr->b;
    cfdb_jv_path_number(root, "gates.server_health.max_log_queue_bytes", &c->health.max_log_queue_bytes);
    cfdb_jv_path_number(root, "gates.server_health.max_moving_bytes", &c->health.max_moving_bytes);
    c->bootstrap_resamples = BENCH_BOOTSTRAP_RESAMPLES;
    c->bootstrap_seed = BENCH_BOOTSTRAP_SEED;
    if (cfdb_jv_path_number(root, "estimation.bootstrap_resamples", &d) && d >= 1)
        c->bootstrap_resamples = (unsigned)d;
    if (cfdb_jv_path_number(root, "estimation.bootstrap_seed", &d))
        c->bootstrap_seed = (uint64_t)d;
    const char *mp = cfdb_jv_path_string(root, "malloc_counter.path");
    snprintf(c->malloc_lib, sizeof c->malloc_lib, "%s", mp ? mp : "");
    const char *pc = cfdb_jv_path_string(root, "pinning.client_cpus");
    snprintf(c->client_cpus, sizeof c->client_cpus, "%s", pc ? pc : "");
    const char *ps = cfdb_jv_path_string(root, "pinning.server_cpus");
    snprintf(c->server_cpus, sizeof c->server_cpus, "%s", ps ? ps : "");
    const char *cl = cfdb_jv_path_string(root, "command_line");
    snprintf(c->command_line, sizeof c->command_line, "%s", cl ? cl : "");
    const char *cu = cfdb_jv_path_string(root, "created_utc");
    snprintf(c->created_utc, sizeof c->created_utc, "%s", cu ? cu : "");
    rc = 0;
out:
    cfdb_jv_free(root);
    return rc;
}
