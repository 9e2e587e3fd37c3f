/* SPDX-License-Identifier: Apache-2.0 */
#include "report.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kvfile.h"

static int have_gnuplot(void)
{
    return system("command -v gnuplot >/dev/null 2>&1") == 0;
}

static void fmt_num(double v, char *buf, size_t len)
{
    if (!isfinite(v))
        snprintf(buf, len, "n/a");
    else if (fabs(v) >= 1000)
        snprintf(buf, len, "%.0f", v);
    else if (fabs(v) >= 10)
        snprintf(buf, len, "%.1f", v);
    else
        snprintf(buf, len, "%.3g", v);
}

static const bench_ratio *find_ratio(const bench_comparison *cm, int a, int b, int m)
{
    for (int k = 0; k < cm->nratios; k++)
        if (cm->ratios[k].a == a && cm->ratios[k].b == b && cm->ratios[k].metric == m)
            return &cm->ratios[k];
    return NULL;
}

/* Ratio plot: per worker level and pair, one panel per metric (each its own log scale, so
 * allocation ratios cannot squash the others), workloads on x with rotated labels. */
static int plot_ratios(const bench_analysis *an, const char *rdir, int li, int a, int b, FILE *md)
{
    const bench_campaign *c = &an->c;
    int workers = c->levels[li].workers;
    static const int shown[] = {M_MEAN, M_P99, M_CPU, M_ALLOCS, M_TPUT};
    enum { NSHOWN = (int)(sizeof shown / sizeof *shown) };
    char dat[BENCH_PATH_MAX + 128], gp[BENCH_PATH_MAX + 128], png[256];
    snprintf(png, sizeof png, "ratios-%s-vs-%s-w%d.png", c->arms[a].name, c->arms[b].name, workers);
    snprintf(dat, sizeof dat, "%s/ratios-%s-vs-%s-w%d.dat", rdir, c->arms[a].name, c->arms[b].name,
             workers);
    snprintf(gp, sizeof gp, "%s/ratios-%s-vs-%s-w%d.gp", rdir, c->arms[a].name, c->arms[b].name,
             workers);
    FILE *d = fopen(dat, "w");
    if (!d)
        return -1;
    int rows = 0, valid[NSHOWN] = {0};
    double lo[NSHOWN], hi[NSHOWN];
    for (int s = 0; s < NSHOWN; s++)
        lo[s] = hi[s] = 1; /* every panel shows parity */
    fprintf(d, "# x workload");
    for (int s = 0; s < NSHOWN; s++)
        fprintf(d, " %s lo hi", bench_metric_names[shown[s]]);
    fprintf(d, "\n");
    for (int i = 0; i < an->ncmp; i++) {
        const bench_comparison *cm = &an->cmp[i];
        if (cm->level != li || cm->excluded)
            continue;
        fprintf(d, "%d %s", rows, bench_workload_name(cm->wl));
        for (int s = 0; s < NSHOWN; s++) {
            const bench_ratio *r = find_ratio(cm, a, b, shown[s]);
            if (r && r->valid && r->ci.lo > 0 && isfinite(r->ci.hi)) {
                fprintf(d, " %.6g %.6g %.6g", r->ci.estimate, r->ci.lo, r->ci.hi);
                valid[s]++;
                lo[s] = fmin(lo[s], r->ci.lo);
                hi[s] = fmax(hi[s], r->ci.hi);
            } else {
                fprintf(d, " NaN NaN NaN");
            }
        }
        fprintf(d, "\n");
        rows++;
    }
    fclose(d);
    if (!rows)
        return 0;
    FILE *g = fopen(gp, "w");
    if (!g)
        return -1;
    fprintf(g, "set terminal pngcairo size 1200,1000 noenhanced font ',10'\n");
    fprintf(g, "set output '%s/%s'\n", rdir, png);
    fprintf(g, "set multiplot layout 3,2 title '%s / %s at %d worker%s: geometric mean of block ratios "
               "and 95%% bootstrap interval (log scale; dashed line = parity)'\n",
            c->arms[a].name, c->arms[b].name, workers, workers == 1 ? "" : "s");
    fprintf(g, "set logscale y\nset format y '%%g'\nset grid ytics mytics\nset datafile missing 'NaN'\n");
    fprintf(g, "set xrange [-0.6:%d.6]\nset xtics rotate by -35 left\nset bmargin 6\nunset key\n", rows - 1);
    fprintf(g, "set arrow 1 from -0.6,1 to %d.6,1 nohead dt 2 lc rgb 'black'\n", rows - 1);
    for (int s = 0; s < NSHOWN; s++) {
        fprintf(g, "set title '%s'\nset ylabel 'ratio %s / %s'\n", bench_metric_labels[shown[s]],
                c->arms[a].name, c->arms[b].name);
        if (!valid[s]) {
            /* nothing to plot (allocations not counted, or an arm allocates nothing) */
            fprintf(g, "set yrange [0.5:2]\nunset xtics\nunset ytics\n"
                       "set label 1 'no ratio: allocations not counted, or an arm allocates nothing' "
                       "at graph 0.5,0.5 center front\n"
                       "plot 1 with lines lc rgb 'white' notitle\nunset label 1\n"
                       "set xtics rotate by -35 left\nset ytics\n");
            continue;
        }
        double ylo = lo[s] / 1.25, yhi = hi[s] * 1.25;
        fprintf(g, "set yrange [%.6g:%.6g]\n", ylo, yhi);
        /* ticks at 1, 1.5, 2, 3, 5, 7 x 10^k inside the range: a narrow log axis still reads */
        static const double steps[] = {1, 1.5, 2, 3, 5, 7};
        fprintf(g, "set ytics (");
        int nt = 0;
        for (int e = -6; e <= 6; e++)
            for (int k = 0; k < 6; k++) {
                double t = steps[k] * pow(10, e);
                if (t >= ylo && t <= yhi && (yhi / ylo < 20 || k == 0 || k == 2 || k == 4))
                    fprintf(g, "%s%g", nt++ ? ", " : "", t);
            }
        fprintf(g, ")\n");
        fprintf(g, "plot '%s' using 1:%d:%d:%d:xtic(2) with yerrorbars pt 7 ps 1.2 lc %d notitle\n", dat,
                3 + 3 * s, 4 + 3 * s, 5 + 3 * s, s + 1);
    }
    fprintf(g, "unset multiplot\n");
    fclose(g);
    char cmd[BENCH_PATH_MAX * 3];
    snprintf(cmd, sizeof cmd, "gnuplot '%s' 2>>'%s/gnuplot.log'", gp, rdir);
    if (system(cmd) != 0)
        return -1;
    fprintf(md, "![ratios %s/%s, %d workers](%s)\n\n", c->arms[a].name, c->arms[b].name, workers, png);
    return 0;
}

/* Latency distribution plot: pooled quantiles per arm. */
static int plot_latency(const bench_analysis *an, const char *rdir, const bench_comparison *cm)
{
    const bench_campaign *c = &an->c;
    int workers = c->levels[cm->level].workers;
    const char *wn = bench_workload_name(cm->wl);
    char dat[BENCH_PATH_MAX + 128], gp[BENCH_PATH_MAX + 128];
    snprintf(dat, sizeof dat, "%s/latency-%s-w%d.dat", rdir, wn, workers);
    snprintf(gp, sizeof gp, "%s/latency-%s-w%d.gp", rdir, wn, workers);
    FILE *d = fopen(dat, "w");
    if (!d)
        return -1;
    fprintf(d, "# quantile");
    for (int a = 0; a < c->narms; a++)
        fprintf(d, " %s_us", c->arms[a].name);
    fprintf(d, "\n");
    for (int q = 0; q < BENCH_QPOINTS; q++) {
        fprintf(d, "%.4f", (double)q / (BENCH_QPOINTS - 1));
        for (int a = 0; a < c->narms; a++)
            fprintf(d, " %.3f", cm->quantiles[a][q]);
        fprintf(d, "\n");
    }
    fclose(d);
    FILE *g = fopen(gp, "w");
    if (!g)
        return -1;
    fprintf(g, "set terminal pngcairo size 800,480 noenhanced\n");
    fprintf(g, "set output '%s/latency-%s-w%d.png'\n", rdir, wn, workers);
    fprintf(g, "set title '%s at %d workers: latency distribution (all blocks pooled)'\n", wn, workers);
    fprintf(g, "set logscale x\nset format x '%%g'\nset grid\nset xlabel 'latency (us, log scale)'\nset ylabel 'cumulative fraction'\n");
    fprintf(g, "set key bottom right\nset yrange [0:1]\nplot ");
    for (int a = 0; a < c->narms; a++)
        fprintf(g, "%s'%s' using %d:1 with lines lw 2 title '%s'", a ? ", " : "", dat, a + 2,
                c->arms[a].name);
    fprintf(g, "\n");
    fclose(g);
    char cmd[BENCH_PATH_MAX * 3];
    snprintf(cmd, sizeof cmd, "gnuplot '%s' 2>>'%s/gnuplot.log'", gp, rdir);
    return system(cmd) == 0 ? 0 : -1;
}

static void md_ratio_cell(FILE *md, const bench_ratio *r)
{
    if (!r) {
        fprintf(md, " - |");
        return;
    }
    if (!r->valid) {
        fprintf(md, " n/a |");
        return;
    }
    if (r->ci.conclusive)
        fprintf(md, " **%.3f** [%.3f, %.3f] |", r->ci.estimate, r->ci.lo, r->ci.hi);
    else
        fprintf(md, " %.3f [%.3f, %.3f] (inconclusive) |", r->ci.estimate, r->ci.lo, r->ci.hi);
}

int bench_report_write(const bench_analysis *an, int print_summary)
{
    const bench_campaign *c = &an->c;
    char rdir[BENCH_PATH_MAX + 16], path[BENCH_PATH_MAX + 64];
    snprintf(rdir, sizeof rdir, "%s/report", an->dir);
    mkdir(rdir, 0755);
    snprintf(path, sizeof path, "%s/results.json", rdir);
    if (bench_write_results_json(an, path) < 0)
        return -1;
    snprintf(path, sizeof path, "%s/summary.md", rdir);
    FILE *md = fopen(path, "w");
    if (!md)
        return -1;
    int gp = have_gnuplot();
    fprintf(md, "# cfdb-bench campaign summary\n\n");
    fprintf(md, "- manifest: `manifest.json`, sha256 `%s` (seal verified)\n", c->manifest_sha256);
    fprintf(md, "- created: %s\n- command: `%s`\n", c->created_utc, c->command_line);
    fprintf(md, "- target: %s%s\n", c->cluster_file, c->server_managed ? " (cfdb-server started by the harness)" : "");
    fprintf(md, "- arms:\n");
    for (int a = 0; a < c->narms; a++)
        if (c->arms[a].kind == BENCH_ARM_FLOOR)
            fprintf(md, "  - **%s**: the floor, cfdb-bench's own minimal replay (`%s`, sha256 `%s`): "
                        "each workload's requests encoded once and patched per transaction, one "
                        "connection, one thread, one writev and one recv per loop iteration; no API, "
                        "no read-your-writes, no location cache, no GRV batching, no allocation per "
                        "transaction (bench/floor.h says all it leaves out)\n",
                    c->arms[a].name, c->arms[a].path, c->arms[a].sha256);
        else
            fprintf(md, "  - **%s**: `%s` (sha256 `%s`)\n", c->arms[a].name, c->arms[a].path, c->arms[a].sha256);
    if (c->floor_note[0])
        fprintf(md, "- floor arm: %s\n", c->floor_note);
    fprintf(md, "- design: %d blocks per comparison, every order of the arms used %d time(s); "
                "keys %llu, seed %llu; every run in a fresh process\n",
            c->blocks, (int)(c->blocks / (int)bench_factorial(c->narms)),
            (unsigned long long)c->keys, (unsigned long long)c->seed);
    fprintf(md, "- gates: quiescence %s (busiest CPU <= %.0f%%, aggregate < %.0f%%, %.2fs window, "
                "wait up to %.0fs); server health %s%s (worst log queue <= %.0f bytes, data moving <= %.0f bytes)\n",
            c->quiet_enabled ? "on" : "**OFF**", 100 * c->quiet.max_cpu, 100 * c->quiet.max_agg,
            c->quiet.window_s, c->quiet.wait_s, c->health_enabled ? "on" : "**OFF**",
            c->health_required ? ", required" : "", c->health.max_log_queue_bytes,
            c->health.max_moving_bytes);
    fprintf(md, "- allocations: %s\n", c->malloc_lib[0] ? "counted by the preloaded malloc interposer" : "**not counted** (interposer missing)");
    fprintf(md, "- estimation: per block the ratio A / B; geometric mean of the block ratios; 95%% "
                "percentile bootstrap over whole blocks, %u resamples, seed %llu. **Bold**: the interval "
                "excludes 1. A ratio whose interval contains 1 is inconclusive, not a win. For "
                "throughput higher is better; for every other metric lower is better (busy cores is "
                "descriptive). Throughput counts transactions (a batchset50 transaction is 50 sets); "
                "allocations are counted over the measured window, CPU over the whole client "
                "lifecycle (library loaded to network stopped), both per measured transaction.\n\n",
            c->bootstrap_resamples, (unsigned long long)c->bootstrap_seed);

    /* Exclusions. */
    int nex = 0;
    for (int i = 0; i < an->ncmp; i++)
        nex += an->cmp[i].excluded;
    fprintf(md, "## Exclusions\n\n");
    if (!nex)
        fprintf(md, "None.\n\n");
    for (int i = 0; i < an->ncmp; i++)
        if (an->cmp[i].excluded)
            fprintf(md, "- %s at %d workers: %s\n", bench_workload_name(an->cmp[i].wl),
                    c->levels[an->cmp[i].level].workers, an->cmp[i].reasons);
    if (nex)
        fprintf(md, "\n");
    int unverified = 0;
    for (int i = 0; i < an->ncmp; i++)
        unverified += an->cmp[i].health_unverified;
    if (unverified)
        fprintf(md, "Note: the server health gate could not be verified after %d run(s) (the status "
                    "document did not report the gated fields or could not be read); see the run "
                    "files' health_detail.\n\n", unverified);

    for (int li = 0; li < c->nlevels; li++) {
        const bench_level *lv = &c->levels[li];
        fprintf(md, "## %d worker%s (%llu warm-up + %llu measured transactions per run)\n\n",
                lv->workers, lv->workers == 1 ? "" : "s", (unsigned long long)lv->warmup,
                (unsigned long long)lv->measured);
        for (int a = 0; a < c->narms; a++)
            for (int b = a + 1; b < c->narms; b++) {
                fprintf(md, "### Ratios %s / %s\n\n| workload |", c->arms[a].name, c->arms[b].name);
                for (int m = 0; m < BENCH_NMETRICS; m++)
                    fprintf(md, " %s |", bench_metric_labels[m]);
                fprintf(md, "\n|---|");
                for (int m = 0; m < BENCH_NMETRICS; m++)
                    fprintf(md, "---|");
                fprintf(md, "\n");
                for (int i = 0; i < an->ncmp; i++) {
                    const bench_comparison *cm = &an->cmp[i];
                    if (cm->level != li)
                        continue;
                    fprintf(md, "| %s |", bench_workload_name(cm->wl));
                    if (cm->excluded) {
                        for (int m = 0; m < BENCH_NMETRICS; m++)
                            fprintf(md, " excluded |");
                        fprintf(md, "\n");
                        continue;
                    }
                    for (int m = 0; m < BENCH_NMETRICS; m++)
                        md_ratio_cell(md, find_ratio(cm, a, b, m));
                    fprintf(md, "\n");
                }
                fprintf(md, "\n");
                if (gp)
                    plot_ratios(an, rdir, li, a, b, md);
            }
        fprintf(md, "### Absolute medians across blocks\n\n| workload | arm |");
        for (int m = 0; m < BENCH_NMETRICS; m++)
            fprintf(md, " %s |", bench_metric_labels[m]);
        fprintf(md, " retries | errors | verify failures |\n|---|---|");
        for (int m = 0; m < BENCH_NMETRICS + 3; m++)
            fprintf(md, "---|");
        fprintf(md, "\n");
        for (int i = 0; i < an->ncmp; i++) {
            const bench_comparison *cm = &an->cmp[i];
            if (cm->level != li || cm->excluded)
                continue;
            for (int a = 0; a < c->narms; a++) {
                fprintf(md, "| %s | %s |", bench_workload_name(cm->wl), c->arms[a].name);
                for (int m = 0; m < BENCH_NMETRICS; m++) {
                    char buf[32];
                    fmt_num(cm->median[a][m], buf, sizeof buf);
                    fprintf(md, " %s |", buf);
                }
                fprintf(md, " %.0f | %.0f | %.0f |\n", cm->retries[a], cm->errors[a],
                        cm->verify_failures[a]);
            }
        }
        fprintf(md, "\n");
        if (gp)
            for (int i = 0; i < an->ncmp; i++) {
                const bench_comparison *cm = &an->cmp[i];
                if (cm->level != li || cm->excluded || !cm->have_quantiles)
                    continue;
                if (plot_latency(an, rdir, cm) == 0)
                    fprintf(md, "![%s latency, %d workers](latency-%s-w%d.png)\n",
                            bench_workload_name(cm->wl), lv->workers, bench_workload_name(cm->wl),
                            lv->workers);
            }
        fprintf(md, "\n");
    }
    if (!gp)
        fprintf(md, "## Plots\n\nNo plots: gnuplot was not found (install gnuplot-nox and run "
                    "`cfdb-bench report DIR` again).\n");
    fprintf(md, "\nRaw data: `runs/*.lat` (one latency in ns per measured transaction), `runs/*.kv` "
                "(run counters, gates), `health/` (status documents), `exclusions.tsv`.\n");
    fclose(md);

    if (print_summary) {
        FILE *f = fopen(path, "r");
        if (f) {
            char buf[4096];
            size_t n;
            while ((n = fread(buf, 1, sizeof buf, f)) > 0)
                fwrite(buf, 1, n, stdout);
            fclose(f);
        }
        printf("\nreport: %s\n", rdir);
    }
    return 0;
}

int bench_report_main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: cfdb-bench report DIR\n");
        return 2;
    }
    bench_analysis an;
    char err[1024];
    if (bench_analyze(argv[1], &an, err, sizeof err) < 0) {
        fprintf(stderr, "cfdb-bench report: %s\n", err);
        bench_analysis_free(&an);
        return 1;
    }
    int rc = bench_report_write(&an, 1) < 0 ? 1 : 0;
    bench_analysis_free(&an);
    return rc;
}
