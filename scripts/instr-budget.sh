#!/usr/bin/env bash
# The client's CPU budget, counted in instructions: a deterministic guard for CI.
#
# For each workload, runs cfdb-bench's worker (one worker thread, libcfdb through fdb_c.h)
# under valgrind's cachegrind twice, with MEASURED_LO and MEASURED_HI measured transactions
# after the same warm-up, against a cfdb-server started here (not under valgrind). The
# difference of the two instruction totals divided by the difference of the counts is the
# client's instructions per transaction, both threads included, with start-up and shutdown
# cancelled out. Lines named hot:PATH are the client's hot paths (tests/perf/hot_paths.c: encode a
# GetValueRequest, decode its reply, merge a write map into a range read), counted per call
# the same way. Lines named sql:PATH are tests/perf/sql_paths.c against the same server: a point
# select by primary key through a prepared SQL statement (sql_point) and the direct Record Layer
# open + load of the same records (rl_point), per statement / load (200 and 1,000 of them).
# Each is compared with tests/perf/instr-budgets.txt: more than the budget fails. The SQL point
# select must also cost at most SQL_RATIO_MAX (1.3) times the direct load: more fails.
#
#   scripts/instr-budget.sh            check (BUILD_DIR, default build, must be built)
#   scripts/instr-budget.sh --update   write the measured counts + 15 % as the new budgets
#
# Needs valgrind. The counts depend on the compiler and flags: budgets are for the default
# RelWithDebInfo build with Debian 12's gcc, as scripts/test.sh makes it.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

build=${BUILD_DIR:-build}
budgets=tests/perf/instr-budgets.txt
lo=${MEASURED_LO:-200}
hi=${MEASURED_HI:-1000}
update=0
[[ ${1:-} == --update ]] && update=1

command -v valgrind >/dev/null || { echo "instr-budget: valgrind not found (scripts/install-deps.sh)" >&2; exit 1; }
for f in "$build/src/server/cfdb-server" "$build/bench/cfdb-bench" "$build/src/api/libcfdb.so" \
         "$build/tests/perf/cfdb-hot-paths" "$build/tests/perf/cfdb-server-paths" \
         "$build/tests/perf/cfdb-sql-paths"; do
    [[ -e $f ]] || { echo "instr-budget: $f is not built" >&2; exit 1; }
done

dir=$(mktemp -d)
"$build"/src/server/cfdb-server --listen 127.0.0.1:0 --cluster-file "$dir/fdb.cluster" --quiet &
server=$!
trap 'kill "$server" 2>/dev/null || true; rm -rf "$dir"' EXIT
for _ in $(seq 200); do [[ -s $dir/fdb.cluster ]] && break; sleep 0.05; done
[[ -s $dir/fdb.cluster ]] || { echo "instr-budget: cfdb-server did not start" >&2; exit 1; }

worker() { # mode workload measured -> prints the instruction total
    local out=$dir/vg.txt
    valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null --log-file="$out" \
        "$build"/bench/cfdb-bench _worker --mode "$1" --lib "$build"/src/api/libcfdb.so \
        --cluster-file "$dir/fdb.cluster" --out "$dir/run" --workload "$2" --workers 1 \
        --warmup 20 --measured "$3" --keys 2000 --seed 7 > "$dir/worker.log" 2>&1 ||
        { echo "instr-budget: worker failed ($1 $2 $3):" >&2; cat "$dir/worker.log" "$out" >&2; exit 1; }
    grep -q '^status=ok' "$dir/run.kv" || { cat "$dir/run.kv" >&2; exit 1; }
    sed -n 's/^==[0-9]*== I *refs: *\([0-9,]*\)$/\1/p' "$out" | tr -d ,
}

"$build"/bench/cfdb-bench _worker --mode populate --lib "$build"/src/api/libcfdb.so \
    --cluster-file "$dir/fdb.cluster" --out "$dir/pop" --workers 8 --keys 2000 > "$dir/pop.log" 2>&1 ||
    { cat "$dir/pop.log" >&2; exit 1; }

hot() { # program path n -> prints the instruction total of a hot-path program (one thread, no I/O)
    local out=$dir/vg-hot.txt
    valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null --log-file="$out" \
        "$build"/tests/perf/"$1" "$2" "$3" ||
        { echo "instr-budget: $1 $2 $3 failed:" >&2; cat "$out" >&2; exit 1; }
    sed -n 's/^==[0-9]*== I *refs: *\([0-9,]*\)$/\1/p' "$out" | tr -d ,
}

sql_path() { # path n -> prints the instruction total of cfdb-sql-paths (the schema set up below)
    local out=$dir/vg-sql.txt
    valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null --log-file="$out" \
        "$build"/tests/perf/cfdb-sql-paths "$dir/fdb.cluster" "$1" "$2" ||
        { echo "instr-budget: cfdb-sql-paths $1 $2 failed:" >&2; cat "$out" >&2; exit 1; }
    sed -n 's/^==[0-9]*== I *refs: *\([0-9,]*\)$/\1/p' "$out" | tr -d ,
}

"$build"/tests/perf/cfdb-sql-paths "$dir/fdb.cluster" setup 1 > "$dir/sql-setup.log" 2>&1 ||
    { cat "$dir/sql-setup.log" >&2; exit 1; }
ratio_max=${SQL_RATIO_MAX:-1.3}
declare -A measured

workloads=$(awk '!/^#/ && NF {print $1}' "$budgets")
failed=0
new=$dir/budgets.new
sed -n '/^#/p' "$budgets" > "$new"
printf '%-24s %12s %12s %8s\n' workload "instr/txn" budget ratio
for wl in $workloads; do
    if [[ $wl == hot:* || $wl == srv:* ]]; then  # a hot path, per call: 1,000 and 5,000 calls
        prog=cfdb-hot-paths
        [[ $wl == srv:* ]] && prog=cfdb-server-paths
        a=$(hot "$prog" "${wl#*:}" 1000)
        b=$(hot "$prog" "${wl#*:}" 5000)
        per=$(( (b - a) / 4000 ))
    elif [[ $wl == sql:* ]]; then # a SQL or Record Layer path, per statement: 200 and 1,000
        a=$(sql_path "${wl#sql:}" 200)
        b=$(sql_path "${wl#sql:}" 1000)
        per=$(( (b - a) / 800 ))
    else                         # a workload, per transaction
        a=$(worker run "$wl" "$lo")
        b=$(worker run "$wl" "$hi")
        per=$(( (b - a) / (hi - lo) ))
    fi
    measured[$wl]=$per
    budget=$(awk -v w="$wl" '$1 == w {print $2}' "$budgets")
    ratio=$(awk -v p="$per" -v b="$budget" 'BEGIN {printf "%.3f", p / b}')
    flag=""
    if (( per > budget )); then flag="  OVER BUDGET"; failed=1;
    elif awk -v r="$ratio" 'BEGIN {exit !(r < 0.80)}'; then flag="  (well under: lower the budget with --update)"; fi
    printf '%-24s %12d %12d %8s%s\n' "$wl" "$per" "$budget" "$ratio" "$flag"
    printf '%s %d\n' "$wl" $(( per + per / 20 * 3 )) >> "$new"
done
# the SQL layer's own cost: a point select within ratio_max of the Record Layer load it makes
# (a budget update cannot raise this one)
ratio_failed=0
if [[ -z ${measured[sql:sql_point]:-} || -z ${measured[sql:rl_point]:-} ]]; then
    echo "instr-budget: $budgets lacks sql:sql_point or sql:rl_point" >&2
    ratio_failed=1
else
    sql_ratio=$(awk -v s="${measured[sql:sql_point]}" -v r="${measured[sql:rl_point]}" 'BEGIN {printf "%.3f", s / r}')
    if awk -v x="$sql_ratio" -v m="$ratio_max" 'BEGIN {exit !(x > m)}'; then
        echo "instr-budget: a SQL point select costs $sql_ratio times the direct Record Layer load (at most $ratio_max);" \
             "profile cfdb-sql-paths sql_point with valgrind --tool=callgrind" >&2
        ratio_failed=1
    else
        echo "instr-budget: SQL point select / Record Layer load = $sql_ratio (at most $ratio_max)"
    fi
fi
if (( update )); then
    cp "$new" "$budgets"
    echo "instr-budget: wrote $budgets"
    exit $ratio_failed
fi
(( ratio_failed )) && exit 1
if (( failed )); then
    echo "instr-budget: a workload costs more instructions per transaction than its budget;" \
         "find what got slower (valgrind --tool=callgrind), or raise the budget with --update" \
         "and say why in the commit" >&2
    exit 1
fi
echo "instr-budget: every workload within its budget"
