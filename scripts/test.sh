#!/usr/bin/env bash
# Builds cfdb with warnings as errors and runs every test, then checks that nothing was
# quietly left out:
#   - ctest must register exactly the number of tests in tests/expected-test-count (a lost
#     add_subdirectory or test file shows as a wrong count), and find at least one;
#   - a skipped test (exit 77, a cmocka skip()) or a test that ran no cmocka case fails,
#     unless tests/allowed-skips.txt lists it with its reason (the accepted ones are printed);
#   - environment variables that narrow or reformat the tests (API_TEST_FILTER, CMOCKA_*)
#     are refused.
# Every test's cmocka summary lines are printed; the last line is "N passed, N failed".
#
#   scripts/test.sh [--only "test_a test_b ..."] [extra cmake options...]
#
# --only builds just those tests' targets (a test's target has its name) and runs exactly
# them: the expected count is then the number of names given.
# BUILD_DIR (default build) and JOBS (default: number of cores) can be set in the
# environment; e.g. the sanitizer run:
#   BUILD_DIR=build-asan scripts/test.sh -DCFDB_SANITIZE=ON -DCMAKE_C_COMPILER=clang
# The closing line is also written to $BUILD_DIR/test-summary.txt (.ci/run adds them up).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

build=${BUILD_DIR:-build}
jobs=${JOBS:-$(nproc)}
only=()
if [[ ${1:-} == --only ]]; then
    [[ $# -ge 2 && -n $2 ]] || { echo "test.sh: --only needs a list of test names" >&2; exit 2; }
    read -r -a only <<< "$2"
    shift 2
fi

# ---- no narrowing from the environment ----
narrowing=()
while IFS='=' read -r name _; do
    case $name in
        *TEST_FILTER* | CMOCKA_MESSAGE_OUTPUT | CMOCKA_XML_FILE) narrowing+=("$name") ;;
    esac
done < <(env)
if [[ ${#narrowing[@]} -gt 0 ]]; then
    echo "test.sh: refusing to run: ${narrowing[*]} set in the environment; it would narrow the tests" >&2
    echo "         or change the output this script checks (unset it; run a test binary directly to filter)" >&2
    exit 2
fi
if [[ -n ${CFDB_API_RUN_BUGS:-} ]]; then
    echo "test.sh: note: CFDB_API_RUN_BUGS is set: tests of known bugs run (and fail until fixed)"
fi

rm -f "$build/test-summary.txt"
cmake -S . -B "$build" -DCFDB_WERROR=ON "$@"
if [[ ${#only[@]} -gt 0 ]]; then
    cmake --build "$build" -j "$jobs" --target "${only[@]}"
else
    cmake --build "$build" -j "$jobs"
fi

# ---- the expected number of tests ----
if [[ ${#only[@]} -gt 0 ]]; then
    expected=${#only[@]}
    what="the --only list"
    regex="^($(IFS='|'; echo "${only[*]}"))\$"
    select=(-R "$regex")
else
    # the first line of the file that is not a comment
    expected=$(grep -v '^[[:space:]]*\(#\|$\)' tests/expected-test-count | head -n 1 | tr -d '[:space:]')
    what="tests/expected-test-count"
    select=()
fi
registered=$(ctest --test-dir "$build" -N "${select[@]}" | sed -n 's/^Total Tests: *//p')
if [[ ! $expected =~ ^[0-9]+$ || $registered != "$expected" ]]; then
    echo "!! ctest registers ${registered:-no} tests; $what expects ${expected:-nothing}." >&2
    echo "!! A test directory, file or target was lost, or tests were added or removed on purpose:" >&2
    echo "!! then set the number in $what (one line). Registered:" >&2
    ctest --test-dir "$build" -N "${select[@]}" | sed -n 's/^ *Test *#[0-9]*: /   /p' >&2
    exit 1
fi

# ---- run ----
log=$build/Testing/Temporary/LastTest.log
console=$build/ctest-console.log
rm -f "$log"
ctest_rc=0
ctest --test-dir "$build" --output-on-failure --no-tests=error "${select[@]}" 2>&1 | tee "$console" ||
    ctest_rc=$?

# ---- what ran: cmocka summaries, skips, cases ----
# Per test: its name, its cmocka summary lines, and the cases it skipped (test:case).
report=$(awk '
    /^[0-9]+\/[0-9]+ Testing: / { test = $3; inout = 0; cases = 0; next }
    /^Output:$/ { inout = 1; next }
    /^<end of output>$/ {
        inout = 0
        if (!cases) print "NOCASES " test
        next
    }
    !inout { next }
    /^\[==========\] (.*: )?Running [0-9]+ test/ {
        n = $0; sub(/.*Running /, "", n); if (n + 0 > 0) cases = 1
    }
    /^\[==========\] .*test\(s\) run\./ || /^\[  PASSED  \]/ || /^\[  FAILED  \] [0-9]+ test\(s\)/ ||
    /^\[  SKIPPED \] [0-9]+ test\(s\)/ || /^\[  ERROR   \] [0-9]+ test\(s\)/ {
        print "SUMMARY " test " " $0; next
    }
    /^\[  SKIPPED \] [^ ]+$/ { if (!seen[test ":" $4]++) print "SKIP " test ":" $4; next }
' "$log")
ctest_skips=$(sed -n 's/^[[:space:]]*[0-9]* - \([^ ]*\) (\(Skipped\|Disabled\|Not Run\))$/\1/p' "$console")

echo
echo "== cmocka summaries"
sed -n 's/^SUMMARY \([^ ]*\) /   \1: /p' <<< "$report"

# allowed skips: "<test>[:<case>|:*]  <reason>"
declare -A allowed=()
while read -r entry reason; do
    [[ -z $entry || $entry == \#* ]] && continue
    if [[ -z $reason ]]; then
        echo "!! tests/allowed-skips.txt: '$entry' has no reason" >&2
        exit 1
    fi
    allowed[$entry]=$reason
done < tests/allowed-skips.txt

bad=0
declare -A bad_tests=() # tests that passed in ctest's eyes but fail here
check_skip() { # $1 = test or test:case; $2 = what happened
    local id=$1 t=${1%%:*} reason=""
    if [[ -n ${allowed[$id]:-} ]]; then reason=${allowed[$id]}
    elif [[ -n ${allowed[$t:*]:-} ]]; then reason=${allowed[$t:*]}
    elif [[ -n ${allowed[$t]:-} ]]; then reason=${allowed[$t]}
    fi
    if [[ -n $reason ]]; then
        echo "   allowed: $id $2 ($reason)"
    else
        echo "!! $id $2, and tests/allowed-skips.txt does not list it" >&2
        bad=1
        bad_tests[$t]=1
    fi
}
echo "== skipped"
for id in $(sed -n 's/^SKIP //p' <<< "$report") $ctest_skips; do
    check_skip "$id" "was skipped"
done
for t in $(sed -n 's/^NOCASES //p' <<< "$report"); do
    grep -qx "$t" <<< "$ctest_skips" || check_skip "$t" "ran no cmocka case"
done

ran=$(grep -c '^[0-9]*/[0-9]* Testing: ' "$log" || true)
failed=$(sed -n 's/.* \([0-9][0-9]*\) tests failed out of [0-9]*$/\1/p' "$console")
failed=${failed:-$ran}
# the closing count is CI's verdict: a test with a skip nobody allowed counts as failed
ctest_failed=$(sed -n '/^The following tests FAILED:/,/^$/s/^[[:space:]]*[0-9]* - \([^ ]*\) .*/\1/p' "$console")
for t in "${!bad_tests[@]}"; do
    grep -qx "$t" <<< "$ctest_failed" || failed=$((failed + 1))
done
if [[ $ran != "$expected" ]]; then
    echo "!! ctest ran $ran of the $expected tests" >&2
    bad=1
fi
passed=$((ran - failed))
# cmocka cases, from the summary lines
read -r cp cf cs < <(awk '
    /^SUMMARY / { sub(/^SUMMARY [^ ]+ /, "") }
    /^\[  PASSED  \] [0-9]+ test/ { p += $4 }
    /^\[  FAILED  \] [0-9]+ test/ || /^\[  ERROR   \] [0-9]+ test/ { f += $4 }
    /^\[  SKIPPED \] [0-9]+ test/ { s += $4 }
    END { print p + 0, f + 0, s + 0 }' <<< "$report")
echo "== $build: $expected tests registered, $ran run; their cmocka cases: $cp passed, $cf failed, $cs skipped"
echo "$passed passed, $failed failed" | tee "$build/test-summary.txt"
if [[ $ctest_rc -ne 0 || $failed -ne 0 || $bad -ne 0 ]]; then
    exit 1
fi
