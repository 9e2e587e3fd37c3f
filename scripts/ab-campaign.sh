#!/usr/bin/env bash
# A/B campaign: this tree's libcfdb against the libcfdb of an older commit, with cfdb-bench, on
# the same cfdb-server, CPU pinned, all seven workloads at 1, 8, 32 and 64 workers. Both
# libraries are built RelWithDebInfo, as scripts/test.sh builds them.
#
#   scripts/ab-campaign.sh [--base COMMIT] [--scale F] [--blocks N] [--out DIR] [--loaded]
#                          [--client-cpus LIST] [--server-cpus LIST] [--workloads LIST] [--workers LIST]
#
#   --base COMMIT      the "before" arm (default b343f09, main before the hand-off work); it is
#                      checked out as a detached worktree in BASE_DIR (default ../perf-base next
#                      to this tree) and only libcfdb is built there
#   --scale F          cfdb-bench's count multiplier (default 1: 200+3,000 transactions per run at
#                      1 worker ... 1,600+32,000 at 64)
#   --blocks N         paired blocks per comparison (default 6; a multiple of 2 for two arms)
#   --loaded           the machine is shared: turn cfdb-bench's quiescence gate off (recorded in
#                      the manifest and the report); leave it out on a quiet machine
#   --client-cpus / --server-cpus   pinning (default 0 and 1: the client process on CPU 0, the
#                      cfdb-server the harness starts on CPU 1)
#
# The arms are copied into OUT/libs first (their SHA-256 are sealed in the manifest). Results:
# OUT/report/summary.md (ratios new / base with 95 % bootstrap intervals, including voluntary and
# involuntary context switches per transaction) and OUT/report/results.json.
#
# On a quiet machine, the full campaign: scripts/ab-campaign.sh
# The short form used on a loaded 2-core machine: scripts/ab-campaign.sh --scale 0.1 --blocks 4 --loaded
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

base=b343f09 scale=1 blocks=6 out="" loaded=0 ccpus=0 scpus=1
workloads=grv,get100,get1000,range100,set100,batchset50,batchset50x1000 workers=1,8,32,64
while (($#)); do
    case $1 in
    --base) base=$2; shift 2 ;;
    --scale) scale=$2; shift 2 ;;
    --blocks) blocks=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --loaded) loaded=1; shift ;;
    --client-cpus) ccpus=$2; shift 2 ;;
    --server-cpus) scpus=$2; shift 2 ;;
    --workloads) workloads=$2; shift 2 ;;
    --workers) workers=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set -e/p' "$0" | sed '$d'; exit 0 ;;
    *) echo "ab-campaign: unknown option $1" >&2; exit 2 ;;
    esac
done

build=${BUILD_DIR:-build}
base_dir=${BASE_DIR:-$(cd .. && pwd)/perf-base}
out=${out:-cfdb-ab-$(date -u +%Y%m%d-%H%M%S)}
jobs=${JOBS:-2}

# the "after" arm: this tree
cmake -S . -B "$build" >/dev/null
cmake --build "$build" -j "$jobs" --target cfdb cfdb-server cfdb-bench >/dev/null

# the "before" arm: BASE at its own worktree
if [[ ! -e $base_dir/.git ]]; then
    git worktree add --detach "$base_dir" "$base" >/dev/null
fi
have=$(git -C "$base_dir" rev-parse HEAD)
want=$(git rev-parse "$base^{commit}")
[[ $have == "$want" ]] || { echo "ab-campaign: $base_dir is at $have, not $base ($want)" >&2; exit 1; }
cmake -S "$base_dir" -B "$base_dir/build" >/dev/null
cmake --build "$base_dir/build" -j "$jobs" --target cfdb >/dev/null

mkdir -p "$out/libs"
cp -L "$build/src/api/libcfdb.so" "$out/libs/new.so"
cp -L "$base_dir/build/src/api/libcfdb.so" "$out/libs/base.so"
{
    echo "new:  $(git rev-parse HEAD)$(git diff --quiet HEAD -- src include || echo ' + uncommitted changes')"
    echo "base: $want"
    echo "load at start: $(cut -d' ' -f1-3 /proc/loadavg)"
} > "$out/libs/ARMS.txt"

gate=()
((loaded)) && gate=(--no-quiet-gate)
set -x
"$build"/bench/cfdb-bench run --no-default-arm --arm new="$out/libs/new.so" --arm base="$out/libs/base.so" \
    --server "$build"/src/server/cfdb-server --workloads "$workloads" --workers "$workers" \
    --scale "$scale" --blocks "$blocks" --client-cpus "$ccpus" --server-cpus "$scpus" \
    "${gate[@]}" --out "$out/campaign"
