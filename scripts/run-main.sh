#!/usr/bin/env bash
# The main job: builds cfdb and shows it working.
#
# Today it decodes a bundled golden capture (real FoundationDB 7.3.77 traffic) with
# cfdb-decode. BUILD_DIR (default build) and JOBS (default: number of cores) can be set.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

build=${BUILD_DIR:-build}
jobs=${JOBS:-$(nproc)}

cmake -S . -B "$build"
cmake --build "$build" -j "$jobs"

main_job() {
    # TODO(server, client): once the dev server and the client exist, replace this body with:
    #   start "$build"/src/server/cfdb-server on a temporary cluster file (kill it on EXIT),
    #   then run the tour (e.g. "$build"/examples/...) against it.
    # Only this function should need to change.
    "$build"/tools/cfdb-decode --jsonl tests/vectors/golden/get.frames.jsonl
}

main_job
