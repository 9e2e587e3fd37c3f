/* SPDX-License-Identifier: Apache-2.0 */
#include "manifest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze.h"
#include "bootstrap.h"
#include "json.h"
#include "json_out.h"
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
    json_out j;
    jo_init(&j, f);
    jo_obj(&j);
    jo_key(&j, "format"); jo_str(&j, BENCH_MANIFEST_FORMAT);
    jo_key(&j, "tool");
    jo_obj(&j);
    jo_key(&j, "name"); jo_str(&j, "cfdb-bench");
    char self[BENCH_PATH_MAX], hex[BENCH_SHA256_HEX];
    if (bench_self_exe(self, sizeof self) == 0) {
        jo_key(&j, "binary"); jo_str(&j, self);
        jo_key(&j, "binary_sha256");
        if (bench_sha256_file(self, hex) == 0) jo_str(&j, hex); else jo_null(&j);
    }
    jo_end_obj(&j);
    jo_key(&j, "created_utc"); jo_str(&j, c->created_utc);
    jo_key(&j, "command_line"); jo_str(&j, c->command_line);
    jo_key(&j, "api_version"); jo_int(&j, BENCH_FDB_API_VERSION);

    jo_key(&j, "arms");
    jo_arr(&j);
    for (int i = 0; i < c->narms; i++) {
        jo_obj(&j);
        jo_key(&j, "name"); jo_str(&j, c->arms[i].name);
        jo_key(&j, "kind"); jo_str(&j, c->arms[i].kind == BENCH_ARM_FLOOR ? "floor" : "library");
        jo_key(&j, "path"); jo_str(&j, c->arms[i].path);
        jo_key(&j, "sha256"); jo_str(&j, c->arms[i].sha256);
        jo_key(&j, "size_bytes"); jo_int(&j, c->arms[i].size);
        jo_end_obj(&j);
    }
    jo_end_arr(&j);
    jo_key(&j, "control_arm"); jo_str(&j, c->arms[c->control_arm].name);
    jo_key(&j, "floor_note"); jo_str(&j, c->floor_note);

    jo_key(&j, "target");
    jo_obj(&j);
    jo_key(&j, "cluster_file"); jo_str(&j, c->cluster_file);
    jo_key(&j, "managed_server"); jo_bool(&j, c->server_managed);
    jo_key(&j, "server_path"); jo_str(&j, c->server_managed ? c->server_path : NULL);
    jo_key(&j, "server_sha256"); jo_str(&j, c->server_managed ? c->server_sha256 : NULL);
    jo_end_obj(&j);

    jo_key(&j, "keyspace");
    jo_obj(&j);
    jo_key(&j, "keys"); jo_int(&j, (int64_t)c->keys);
    jo_key(&j, "distribution"); jo_str(&j, "uniform");
    jo_key(&j, "layout"); jo_str(&j, "cfdb-bench/v100/%010u (100 B), cfdb-bench/v1000/%010u (1000 B)");
    jo_end_obj(&j);

    jo_key(&j, "workloads");
    jo_arr(&j);
    for (int i = 0; i < c->nworkloads; i++) {
        jo_obj(&j);
        jo_key(&j, "name"); jo_str(&j, bench_workload_name(c->workloads[i]));
        jo_key(&j, "description"); jo_str(&j, bench_workload_describe(c->workloads[i]));
        jo_end_obj(&j);
    }
    jo_end_arr(&j);
    jo_key(&j, "levels");
    jo_arr(&j);
    for (int i = 0; i < c->nlevels; i++) {
        jo_obj(&j);
        jo_key(&j, "workers"); jo_int(&j, c->levels[i].workers);
        jo_key(&j, "warmup"); jo_int(&j, (int64_t)c->levels[i].warmup);
        jo_key(&j, "measured"); jo_int(&j, (int64_t)c->levels[i].measured);
        jo_end_obj(&j);
    }
    jo_end_arr(&j);
    jo_key(&j, "blocks_requested"); jo_int(&j, c->blocks_requested);
    jo_key(&j, "blocks"); jo_int(&j, c->blocks);
    jo_key(&j, "orders");
    jo_arr(&j);
    for (int b = 0; b < c->blocks; b++) {
        jo_arr(&j);
        for (int p = 0; p < c->narms; p++)
            jo_str(&j, c->arms[c->orders[b * c->narms + p]].name);
        jo_end_arr(&j);
    }
    jo_end_arr(&j);
    jo_key(&j, "seed"); jo_int(&j, (int64_t)c->seed);

    jo_key(&j, "gates");
    jo_obj(&j);
    jo_key(&j, "quiescence");
    jo_obj(&j);
    jo_key(&j, "enabled"); jo_bool(&j, c->quiet_enabled);
    jo_key(&j, "max_cpu"); jo_num(&j, c->quiet.max_cpu);
    jo_key(&j, "max_aggregate"); jo_num(&j, c->quiet.max_agg);
    jo_key(&j, "window_s"); jo_num(&j, c->quiet.window_s);
    jo_key(&j, "wait_s"); jo_num(&j, c->quiet.wait_s);
    jo_end_obj(&j);
    jo_key(&j, "server_health");
    jo_obj(&j);
    jo_key(&j, "enabled"); jo_bool(&j, c->health_enabled);
    jo_key(&j, "required"); jo_bool(&j, c->health_required);
    jo_key(&j, "source"); jo_str(&j, "\\xff\\xff/status/json via the control arm");
    jo_key(&j, "max_log_queue_bytes"); jo_num(&j, c->health.max_log_queue_bytes);
    jo_key(&j, "max_moving_bytes"); jo_num(&j, c->health.max_moving_bytes);
    jo_end_obj(&j);
    jo_end_obj(&j);
    jo_key(&j, "run_timeout_s"); jo_num(&j, c->run_timeout_s);
    jo_key(&j, "pinning");
    jo_obj(&j);
    jo_key(&j, "client_cpus"); if (c->client_cpus[0]) jo_str(&j, c->client_cpus); else jo_null(&j);
    jo_key(&j, "server_cpus"); if (c->server_cpus[0]) jo_str(&j, c->server_cpus); else jo_null(&j);
    jo_end_obj(&j);

    jo_key(&j, "malloc_counter");
    if (c->malloc_lib[0]) {
        jo_obj(&j);
        jo_key(&j, "path"); jo_str(&j, c->malloc_lib);
        jo_key(&j, "sha256"); jo_str(&j, c->malloc_sha256);
        jo_end_obj(&j);
    } else {
        jo_null(&j);
    }
    jo_key(&j, "metrics");
    jo_arr(&j);
    for (int i = 0; i < BENCH_NMETRICS; i++)
        jo_str(&j, bench_metric_names[i]);
    jo_end_arr(&j);
    jo_key(&j, "estimation");
    jo_obj(&j);
    jo_key(&j, "ratio"); jo_str(&j, "per block, arm A / arm B");
    jo_key(&j, "summary"); jo_str(&j, "geometric mean of block ratios");
    jo_key(&j, "interval"); jo_str(&j, "percentile bootstrap over whole blocks");
    jo_key(&j, "bootstrap_resamples"); jo_int(&j, c->bootstrap_resamples);
    jo_key(&j, "bootstrap_seed"); jo_int(&j, (int64_t)c->bootstrap_seed);
    jo_key(&j, "confidence"); jo_num(&j, BENCH_BOOTSTRAP_CONFIDENCE);
    jo_end_obj(&j);
    jo_key(&j, "machine");
    bench_machine_json(&j);
    jo_end_obj(&j);
    if (fclose(f) != 0) {
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
    json_value *root = json_parse_file(path, err, errlen);
    if (!root)
        return -1;
    int rc = -1;
    const char *fmt = json_path_string(root, "format");
    if (!fmt || strcmp(fmt, BENCH_MANIFEST_FORMAT)) {
        snprintf(err, errlen, "%s: not a %s document", path, BENCH_MANIFEST_FORMAT);
        goto out;
    }
    const json_value *arms = json_member(root, "arms");
    if (!arms || arms->type != JSON_ARRAY || arms->count < 1 || arms->count > BENCH_MAX_ARMS) {
        snprintf(err, errlen, "%s: bad arms", path);
        goto out;
    }
    for (size_t i = 0; i < arms->count; i++) {
        const char *n = json_path_string(arms->items[i], "name");
        const char *p = json_path_string(arms->items[i], "path");
        const char *h = json_path_string(arms->items[i], "sha256");
        if (!n) {
            snprintf(err, errlen, "%s: arm without a name", path);
            goto out;
        }
        snprintf(c->arms[i].name, sizeof c->arms[i].name, "%s", n);
        snprintf(c->arms[i].path, sizeof c->arms[i].path, "%s", p ? p : "");
        snprintf(c->arms[i].sha256, sizeof c->arms[i].sha256, "%s", h ? h : "");
        const char *k = json_path_string(arms->items[i], "kind");
        c->arms[i].kind = k && !strcmp(k, "floor") ? BENCH_ARM_FLOOR : BENCH_ARM_LIBRARY;
        double sz = 0;
        json_path_number(arms->items[i], "size_bytes", &sz);
        c->arms[i].size = (int64_t)sz;
    }
    c->narms = (int)arms->count;
    const char *fnote = json_path_string(root, "floor_note");
    snprintf(c->floor_note, sizeof c->floor_note, "%s", fnote ? fnote : "");
    const char *ctl = json_path_string(root, "control_arm");
    c->control_arm = ctl && arm_index(c, ctl) >= 0 ? arm_index(c, ctl) : 0;

    const json_value *wls = json_member(root, "workloads");
    for (size_t i = 0; wls && wls->type == JSON_ARRAY && i < wls->count && i < WL_COUNT; i++) {
        const char *n = json_path_string(wls->items[i], "name");
        int w = n ? bench_workload_parse(n) : -1;
        if (w < 0) {
            snprintf(err, errlen, "%s: unknown workload %s", path, n ? n : "?");
            goto out;
        }
        c->workloads[c->nworkloads++] = w;
    }
    const json_value *lv = json_member(root, "levels");
    for (size_t i = 0; lv && lv->type == JSON_ARRAY && i < lv->count && i < BENCH_MAX_LEVELS; i++) {
        double w = 0, wu = 0, m = 0;
        json_path_number(lv->items[i], "workers", &w);
        json_path_number(lv->items[i], "warmup", &wu);
        json_path_number(lv->items[i], "measured", &m);
        c->levels[c->nlevels].workers = (int)w;
        c->levels[c->nlevels].warmup = (uint64_t)wu;
        c->levels[c->nlevels].measured = (uint64_t)m;
        c->nlevels++;
    }
    double d;
    if (json_path_number(root, "blocks", &d) < 0 || d < 1 || d > BENCH_MAX_BLOCKS) {
        snprintf(err, errlen, "%s: bad blocks", path);
        goto out;
    }
    c->blocks = (int)d;
    c->blocks_requested = json_path_number(root, "blocks_requested", &d) == 0 ? (int)d : c->blocks;
    const json_value *ord = json_member(root, "orders");
    if (!ord || ord->type != JSON_ARRAY || (int)ord->count != c->blocks) {
        snprintf(err, errlen, "%s: orders do not match blocks", path);
        goto out;
    }
    for (int b = 0; b < c->blocks; b++) {
        const json_value *o = ord->items[b];
        if (o->type != JSON_ARRAY || (int)o->count != c->narms) {
            snprintf(err, errlen, "%s: order %d has the wrong length", path, b);
            goto out;
        }
        for (int p = 0; p < c->narms; p++) {
            int a = o->items[p]->type == JSON_STRING ? arm_index(c, o->items[p]->string) : -1;
            if (a < 0) {
                snprintf(err, errlen, "%s: order %d names an unknown arm", path, b);
                goto out;
            }
            c->orders[b * c->narms + p] = a;
        }
    }
    if (json_path_number(root, "seed", &d) == 0)
        c->seed = (uint64_t)d;
    if (json_path_number(root, "keyspace.keys", &d) == 0)
        c->keys = (uint64_t)d;
    const char *cf = json_path_string(root, "target.cluster_file");
    snprintf(c->cluster_file, sizeof c->cluster_file, "%s", cf ? cf : "");
    const json_value *ms = json_path(root, "target.managed_server");
    c->server_managed = ms && ms->type == JSON_BOOL && ms->number != 0;
    const json_value *qe = json_path(root, "gates.quiescence.enabled");
    c->quiet_enabled = qe && qe->type == JSON_BOOL && qe->number != 0;
    json_path_number(root, "gates.quiescence.max_cpu", &c->quiet.max_cpu);
    json_path_number(root, "gates.quiescence.max_aggregate", &c->quiet.max_agg);
    json_path_number(root, "gates.quiescence.window_s", &c->quiet.window_s);
    json_path_number(root, "gates.quiescence.wait_s", &c->quiet.wait_s);
    const json_value *he = json_path(root, "gates.server_health.enabled");
    c->health_enabled = he && he->type == JSON_BOOL && he->number != 0;
    const json_value *hr = json_path(root, "gates.server_health.required");
    c->health_required = hr && hr->type == JSON_BOOL && hr->number != 0;
    json_path_number(root, "gates.server_health.max_log_queue_bytes", &c->health.max_log_queue_bytes);
    json_path_number(root, "gates.server_health.max_moving_bytes", &c->health.max_moving_bytes);
    c->bootstrap_resamples = BENCH_BOOTSTRAP_RESAMPLES;
    c->bootstrap_seed = BENCH_BOOTSTRAP_SEED;
    if (json_path_number(root, "estimation.bootstrap_resamples", &d) == 0 && d >= 1)
        c->bootstrap_resamples = (unsigned)d;
    if (json_path_number(root, "estimation.bootstrap_seed", &d) == 0)
        c->bootstrap_seed = (uint64_t)d;
    const char *mp = json_path_string(root, "malloc_counter.path");
    snprintf(c->malloc_lib, sizeof c->malloc_lib, "%s", mp ? mp : "");
    const char *pc = json_path_string(root, "pinning.client_cpus");
    snprintf(c->client_cpus, sizeof c->client_cpus, "%s", pc ? pc : "");
    const char *ps = json_path_string(root, "pinning.server_cpus");
    snprintf(c->server_cpus, sizeof c->server_cpus, "%s", ps ? ps : "");
    const char *cl = json_path_string(root, "command_line");
    snprintf(c->command_line, sizeof c->command_line, "%s", cl ? cl : "");
    const char *cu = json_path_string(root, "created_utc");
    snprintf(c->created_utc, sizeof c->created_utc, "%s", cu ? cu : "");
    rc = 0;
out:
    json_free(root);
    return rc;
}
