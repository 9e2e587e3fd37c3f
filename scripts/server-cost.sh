#!/usr/bin/env bash
# The dev server's CPU per transaction under one cfdb-bench workload (not part of CI), to
# compare server binaries (e.g. one built from an older commit) or client arms:
#   scripts/server-cost.sh [--server BIN] [--floor] WORKLOAD WORKERS [MEASURED] [RUNS]
# Each run starts the server pinned to CPU 1 (in memory, --quiet), populates 2,000 keys,
# then runs cfdb-bench's worker pinned to CPU 0 (libcfdb from BUILD, default build; with
# --floor the floor arm instead) for 1,000 warm-up and MEASURED (default 6,000)
# transactions, and prints one line: the server's CPU time over the whole run (populate and
# warm-up included) per measured-plus-warm-up transaction, its commit and GRV batch means
# (control port "status"), the worker's measured window and its CPU. Wall-clock figures
# mean something only on a quiet machine; the server's CPU time less so, but it is still a
# reading, not a count.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
build=$(realpath "${BUILD:-build}")
server=$build/src/server/cfdb-server
mode=run
while [[ ${1:-} == --* ]]; do
    case $1 in
        --server) server=$(realpath "$2"); shift 2 ;;
        --floor) mode=floor; shift ;;
        *) echo "server-cost: unknown option $1" >&2; exit 2 ;;
    esac
done
[[ $# -ge 2 ]] || { sed -n '3p' "$0" >&2; exit 2; }
workload=$1 workers=$2 measured=${3:-6000} runs=${4:-1}
warmup=1000
lib=$build/src/api/libcfdb.so
bench=$build/bench/cfdb-bench
dir=$(mktemp -d /tmp/cfdb-server-cost.XXXXXX)
trap 'kill "${pid:-}" 2>/dev/null || true; rm -rf "$dir"' EXIT
tick=$(getconf CLK_TCK)
for _ in $(seq "$runs"); do
    rm -f "$dir/fdb.cluster"
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    taskset -c 1 "$server" --listen 127.0.0.1:0 --cluster-file "$dir/fdb.cluster" --control-port "$port" --quiet \
        2> "$dir/server.log" &
    pid=$!
    for _ in $(seq 200); do [[ -s $dir/fdb.cluster ]] && break; sleep 0.05; done
    "$bench" _worker --mode populate --lib "$lib" --cluster-file "$dir/fdb.cluster" --out "$dir/pop" \
        --keys 2000 > "$dir/pop.log" 2>&1 || { cat "$dir/pop.log" >&2; exit 1; }
    args=(--mode "$mode" --cluster-file "$dir/fdb.cluster" --out "$dir/run" --workload "$workload"
          --workers "$workers" --warmup "$warmup" --measured "$measured" --keys 2000 --seed 1)
    [[ $mode == run ]] && args+=(--lib "$lib")
    taskset -c 0 "$bench" _worker "${args[@]}" > "$dir/run.log" 2>&1 || { cat "$dir/run.log" >&2; exit 1; }
    grep -q '^status=ok' "$dir/run.kv" || { cat "$dir/run.kv" >&2; exit 1; }
    status=$("$server" --control "$port" status 2>/dev/null)
    read -r ut st < <(awk '{print $14, $15}' "/proc/$pid/stat")
    kill "$pid"; wait "$pid" 2>/dev/null || true; pid=
    field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<< " $status"; }
    kv() { sed -n "s/^$1=//p" "$dir/run.kv"; }
    awk -v ut="$ut" -v st="$st" -v tick="$tick" -v n=$((measured + warmup)) -v m="$measured" \
        -v cb="$(field commit_batch_mean)" -v gb="$(field grv_batch_mean)" \
        -v wall="$(kv window_wall_ns)" -v cpu="$(kv window_cpu_us)" -v arm="$mode" -v wl="$workload" -v w="$workers" \
        'BEGIN { printf "%s %s x%s: server %.1f us CPU/txn, commit batch mean %s, grv batch mean %s; worker: %.0f ms for %d txns, %.1f us CPU/txn\n",
                 arm, wl, w, (ut + st) / tick * 1e6 / n, cb, gb, wall / 1e6, m, cpu / m }'
done
