#!/usr/bin/env bash
# Builds cfdb with warnings as errors and runs every test.
#
#   scripts/test.sh [extra cmake options...]
#
# BUILD_DIR (default build) and JOBS (default: number of cores) can be set in the
# environment; e.g. the sanitizer run:
#   BUILD_DIR=build-asan scripts/test.sh -DCFDB_SANITIZE=ON -DCMAKE_C_COMPILER=clang
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

build=${BUILD_DIR:-build}
jobs=${JOBS:-$(nproc)}

cmake -S . -B "$build" -DCFDB_WERROR=ON "$@"
cmake --build "$build" -j "$jobs"
ctest --test-dir "$build" --output-on-failure
