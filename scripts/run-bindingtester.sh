#!/usr/bin/env bash
# Runs FoundationDB's binding conformance test (bindings/bindingtester, with the Python tester
# bindings/python/tests/tester.py) on cfdb: the Python binding and the tester go through cfdb's
# libfdb_c.so, against a cfdb-server started with --tenant-mode optional. Nothing is fetched:
# the bindingtester, the binding and the files its build generates come from a FoundationDB
# source tree or git repository given on the command line, extracted into a temp dir (nothing of
# them lives in this repository). Not part of CI.
#
#   scripts/run-bindingtester.sh [BUILD_DIR [FDB_GIT_DIR [FDB_TAG]]] [-- bindingtester args...]
#   defaults: build, /work/.mirror/apple+foundationdb/repo, 7.3.77
#   FDB_GIT_DIR may also be a checked-out FoundationDB source tree (then FDB_TAG is ignored).
#
# Without bindingtester arguments it runs a set of tests (RUNS below, one line per run); each
# run's summary line ("Test with seed S and concurrency C had N incorrect result(s) and E
# error(s) at API version V") is printed, the full logs stay in LOG_DIR (default: a temp dir,
# printed at the end). With arguments after --, it runs the bindingtester once with them, e.g.
#   scripts/run-bindingtester.sh build -- --test-name api --num-ops 2000 --seed 7 --concurrency 5
# (the tester name python3 and --cluster-file are added). A single tester checks its own
# results (errors, hangs, the directory and tuple tests' checks); to compare row by row with
# another client library, run the same seeds with that library on LD_LIBRARY_PATH and compare
# the logs, or pass --compare python3 with a second binding.
# Each run has a timeout (RUN_TIMEOUT seconds, default 900): a hang shows as rc=124.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
pos=()
while [[ $# -gt 0 && $1 != -- ]]; do
    pos+=("$1")
    shift
done
[[ ${1:-} == -- ]] && shift
extra=("$@")
build=$(realpath "${pos[0]:-build}")
fdb_src=${pos[1]:-/work/.mirror/apple+foundationdb/repo}
fdb_tag=${pos[2]:-7.3.77}
[[ -x $build/src/server/cfdb-server && -e $build/src/api/libfdb_c.so ]] ||
    { echo "run-bindingtester.sh: build $build first (cfdb-server and libfdb_c.so)" >&2; exit 2; }

work=$(mktemp -d)
log_dir=${LOG_DIR:-$work/logs}
mkdir -p "$log_dir"
cleanup() {
    kill "${server:-}" 2>/dev/null || true
    wait "${server:-}" 2>/dev/null || true
    if [[ -n ${LOG_DIR:-} ]]; then rm -rf "$work"; else rm -rf "$work/bindings"; fi
}
trap cleanup EXIT

# 1. the bindingtester, the Python binding and the inputs of its generated files
paths=(bindings/python bindings/bindingtester fdbclient/vexillographer/fdb.options flow/ApiVersions.cmake)
if [[ -f $fdb_src/bindings/python/fdb/impl.py ]]; then
    (cd "$fdb_src" && tar -cf - "${paths[@]}") | tar -xf - -C "$work"
else
    git --git-dir="$fdb_src" archive "$fdb_tag" "${paths[@]}" | tar -xf - -C "$work"
fi

# 2. fdb/fdboptions.py and fdb/apiversion.py: the same generator as check-python-binding.sh
#    (its embedded Python, taken from that script so that there is one copy)
sed -n "/^python3 - \"\$work\/src\" \"\$work\/py\/fdb\" <<'PY'\$/,/^PY\$/p" scripts/check-python-binding.sh |
    sed '1d;$d' > "$work/genoptions.py"
[[ -s $work/genoptions.py ]] || { echo "run-bindingtester.sh: generator not found in check-python-binding.sh" >&2; exit 1; }
python3 "$work/genoptions.py" "$work" "$work/bindings/python/fdb"

# 3. the dev server, tenants allowed (the api test creates and deletes tenants)
"$build/src/server/cfdb-server" --listen 127.0.0.1:0 --cluster-file "$work/fdb.cluster" --tenant-mode optional \
    --quiet &
server=$!
for _ in $(seq 100); do [[ -s $work/fdb.cluster ]] && break; sleep 0.05; done
[[ -s $work/fdb.cluster ]] || { echo "cfdb-server did not start" >&2; exit 1; }

export LD_LIBRARY_PATH="$build/src/api${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PYTHONPATH="$work/bindings/python"
tester() {
    (cd "$work/bindings" && timeout "${RUN_TIMEOUT:-900}" python3 bindingtester/bindingtester.py python3 \
        --cluster-file "$work/fdb.cluster" "$@")
}

if [[ ${#extra[@]} -gt 0 ]]; then
    tester "${extra[@]}"
    exit
fi

# 4. the default set: every test kind, several seeds, concurrent testers too
RUNS=${RUNS:-"--test-name api --num-ops 2000 --seed 1
--test-name api --num-ops 2000 --seed 2
--test-name api --num-ops 2000 --seed 3
--test-name api --num-ops 1000 --seed 7 --concurrency 5
--test-name api --num-ops 1000 --seed 201 --concurrency 5
--test-name directory --num-ops 1000 --seed 1
--test-name directory --num-ops 500 --seed 4 --concurrency 5
--test-name directory_hca --num-ops 500 --seed 1 --concurrency 5
--test-name tuple --num-ops 500 --seed 1
--test-name scripted"}
status=0
n=0
while IFS= read -r run; do
    [[ -z $run ]] && continue
    n=$((n + 1))
    read -r -a args <<< "$run"
    rc=0
    tester "${args[@]}" > "$log_dir/run$n.log" 2>&1 || rc=$?
    summary=$(grep -h 'incorrect result' "$log_dir/run$n.log" | tail -1 || true)
    echo "[$run] rc=$rc ${summary:-(no summary line)}"
    if ((rc != 0)) || [[ -z $summary ]] || ! grep -q 'had 0 incorrect result(s) and 0 error(s)' <<< "$summary"; then
        status=1
    fi
done <<< "$RUNS"
echo "logs: $log_dir"
exit "$status"
