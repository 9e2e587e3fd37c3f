/* SPDX-License-Identifier: Apache-2.0 */
/* cfdb-bench's Record Layer phase: cfdb-bench-records, run as `cfdb-bench records`.
 *
 * Cases, each an operation timed per transaction on a store of people (bench/records_bench.proto:
 * three VALUE indexes; `--records` small records named n00000.. and `--big` split records of
 * 150,000 bytes named zbig000..):
 *   save              one record saved (old record read, three indexes updated) and committed
 *   load              one record loaded by primary key
 *   index-scan        10 entries of the name index (no records)
 *   fetch-1, fetch-10, fetch-1000 (and -rev): the records of 1, 10, 1,000 name-index entries
 *                     from a random position, forward or reverse
 *   fetch-skip3of10   10 entries, the first 3 skipped (7 records)
 *   fetch-split       2 split records (150,000 bytes each)
 * fetch cases compare two arms, USE_REMOTE_FETCH ("remote") and SCAN_AND_FETCH ("saf"), the
 * others are measured alone. Every case runs under each configuration: placement "same" (index
 * and records on one storage server) or "split" (--shards at the index space and
 * --separate-ports: index on storage server 1, records on 0), and an added reply delay of 0 or
 * 0.5 ms (cfdb-server's control `delay 0.5`, applied to every reply). With --cluster-file the
 * phase runs instead against an existing cluster, as it is: one configuration, "cluster".
 * Every configuration records its placement (`_placement`: fdb_transaction_get_addresses_for_key
 * of the name index's first key and of the first record, compared as address sets: same,
 * different or overlapping; placement.tsv, summary.md); for the servers it starts, "same" and
 * "split" must come out same and different. When a cfdb-server control port is known (its own
 * servers, or --control-port) each fetch run's server-side mapped_requests delta must equal the
 * remote cursor's requests (warm-up included) and be 0 for scan-and-fetch, or the run fails.
 *
 * Design, as the client workloads (README.md): a fresh worker process per run; blocks, each
 * running both arms in counterbalanced orders (bench_orders); per block the ratio of the arms'
 * mean latencies (remote / saf); the geometric mean over blocks with a 95 % percentile
 * bootstrap over whole blocks (bench_bootstrap_geomean, 20,000 resamples, seed 492817).
 * Single-arm cases report the geometric mean of the blocks' mean latencies with the same
 * bootstrap. Output in --out DIR: runs/NAME.lat (ns per op), runs/NAME.kv, results.tsv,
 * summary.md, and (with gnuplot) records.png. */
#ifndef CFDB_BENCH_RL_BENCH_H
#define CFDB_BENCH_RL_BENCH_H

int bench_rl_main(int argc, char **argv);
/* `_run` and `_populate`: one worker process (rl_bench_ops.c). */
int bench_rl_worker_main(int argc, char **argv);

#endif
