#!/usr/bin/env bash
# The main job: builds cfdb and shows it working.
#
# Starts cfdb-server, runs the C API tour (examples/tour.c), the Record Layer example
# (examples/records.c) and the SQL example (examples/sql.c) on libcfdb against it, and
# decodes a bundled golden capture (real FoundationDB 7.3.77 traffic) with cfdb-decode. BUILD_DIR (default build) and JOBS (default: number of cores) can be set.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

build=${BUILD_DIR:-build}
jobs=${JOBS:-$(nproc)}

cmake -S . -B "$build"
cmake --build "$build" -j "$jobs"

main_job() {
    # Start a dev server on a free port with a temporary cluster file, run the tour of
    # the C API on libcfdb against it, and stop the server.
    dir=$(mktemp -d)
    "$build"/src/server/cfdb-server --listen 127.0.0.1:0 --cluster-file "$dir/fdb.cluster" --quiet &
    server=$!
    trap 'kill "$server" 2>/dev/null || true; rm -rf "$dir"' EXIT
    for _ in $(seq 100); do
        [[ -s $dir/fdb.cluster ]] && break
        sleep 0.05
    done
    echo "cfdb-server is up: $(cat "$dir/fdb.cluster")"
    "$build"/examples/example_tour "$dir/fdb.cluster"
    echo "the Record Layer example (examples/records.c) on the same server:"
    "$build"/examples/example_records "$dir/fdb.cluster"
    echo "SQL on those records (examples/sql.c: fdb-relational's DDL, SQLite's queries):"
    "$build"/examples/example_sql "$dir/fdb.cluster"
    echo "and a real capture decoded by cfdb-decode (first lines):"
    "$build"/tools/cfdb-decode --jsonl tests/vectors/golden/get.frames.jsonl > "$dir/decoded.txt"
    head -n 20 "$dir/decoded.txt"
}

main_job
