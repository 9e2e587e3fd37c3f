#!/usr/bin/env bash
# Snapshot and full-disk measurements (not part of CI), against any cfdb-server binary (e.g. one built
# from an older commit, to compare):
#   scripts/measure-snapshot.sh latency   [SERVER_BIN] [KEYS]   slowest read during a snapshot
#   scripts/measure-snapshot.sh full-disk [SERVER_BIN] [KEYS]   CPU while snapshots fail (root)
#   scripts/measure-snapshot.sh corrupt   [SERVER_BIN]          one byte flipped mid-WAL
# latency: KEYS (default 1,000,000) keys through cfdb's libfdb_c.so, 5 s of one-at-a-time
#   reads (read version + get), then a snapshot ("snapshot start" through the control
#   port, or "snapshot" with TRIGGER=snapshot for a server without background snapshots)
#   with the same reads until it is written: slowest read, p99 and p50 of both phases.
# full-disk: in a private mount namespace, a 200 MB tmpfs filled so that the log passes
#   64 MB (a snapshot is due) while a snapshot cannot fit; the server's CPU over 10 s idle,
#   then 5 s of reads, and how many snapshot attempts it logged.
# corrupt: 100,000 keys in 100 commits, kill -9, the byte in the middle of the WAL changed,
#   restart: what the server says and does, and how many keys it has.
# Uses scripts/soak-load.c (compiled here) and the build in BUILD (default build).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
mode=${1:-latency}
build=$(realpath "${BUILD:-build}")
bin=$(realpath "${2:-$build/src/server/cfdb-server}")
cmake --build "$build" -j"${JOBS:-2}" --target cfdb cfdb-server >/dev/null || exit 1
work=$(mktemp -d /tmp/cfdb-measure.XXXXXX)
trap 'kill -9 ${pid:-} 2>/dev/null; wait 2>/dev/null; umount "$work/fs" 2>/dev/null; rm -rf "$work"' EXIT
cc -O2 -o "$work/soak-load" scripts/soak-load.c -Iinclude -L"$build/src/api" -lcfdb -lpthread \
    -Wl,-rpath,"$build/src/api" || exit 1
load=$work/soak-load
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# start DATADIR [flags]: the server in the background ($pid); 1 when it exits instead
start() {
    local data=$1; shift
    rm -f "$work/fdb.cluster"
    cport=$(free_port)
    "$bin" --listen 127.0.0.1:0 --cluster-file "$work/fdb.cluster" --datadir "$data" --control-port "$cport" \
        "$@" 2>>"$work/server.log" &
    pid=$!
    for _ in $(seq 100); do
        [[ -s $work/fdb.cluster ]] && return 0
        kill -0 "$pid" 2>/dev/null || { wait "$pid"; pid=; return 1; }
        sleep 0.1
    done
    return 1
}

case $mode in
latency)
    keys=${3:-1000000}
    start "$work/data" || exit 1
    "$load" "$work/fdb.cluster" load "$keys"
    "$load" "$work/fdb.cluster" latency "$keys" 5 "$cport" "${TRIGGER:-snapshot start}"
    ;;
full-disk)
    keys=${3:-1400000}
    if [[ ${CFDB_MEASURE_IN_NS:-} != 1 ]]; then
        CFDB_MEASURE_IN_NS=1 exec unshare -m "$0" "$@"
    fi
    mount --make-rprivate / && mkdir -p "$work/fs" && mount -t tmpfs -o size=200m tmpfs "$work/fs" || exit 1
    start "$work/fs/data" || exit 1
    "$load" "$work/fdb.cluster" load 300000 >/dev/null
    avail=$(df -B1 --output=avail "$work/fs" | tail -1)
    need=$((64 * 1048576 - $(du -sb "$work/fs/data" | cut -f1) + 8 * 1048576))
    dd if=/dev/zero of="$work/fs/ballast" bs=1M count=$(((avail - need) / 1048576)) status=none
    "$load" "$work/fdb.cluster" load "$keys" >/dev/null 2>"$work/load.err"
    echo "loading $keys keys: exit $? $(tail -1 "$work/load.err")"
    echo "data: $(ls -l "$work/fs/data" | tail -n +2 | awk '{printf "%s=%s ", $9, $5}')"
    df -h "$work/fs" | tail -1
    hz=$(getconf CLK_TCK)
    c0=$(awk '{print $14 + $15}' "/proc/$pid/stat")
    sleep 10
    c1=$(awk '{print $14 + $15}' "/proc/$pid/stat")
    echo "server CPU over 10 s idle: $(echo "scale=2; ($c1 - $c0) / $hz" | bc) s"
    "$load" "$work/fdb.cluster" latency "$keys" 5 "$cport" "snapshot status" | grep baseline
    echo "snapshot failures logged: $(grep -c 'snapshot failed' "$work/server.log")"
    grep 'snapshot failed' "$work/server.log" | tail -2
    ;;
corrupt)
    start "$work/data" || exit 1
    "$load" "$work/fdb.cluster" load 100000 >/dev/null
    "$load" "$work/fdb.cluster" count
    kill -9 "$pid"; wait "$pid" 2>/dev/null; pid=
    size=$(stat -c %s "$work/data/wal")
    off=$((size / 2))
    printf '\x55' | dd of="$work/data/wal" bs=1 seek=$off conv=notrunc status=none
    sum=$(md5sum <"$work/data/wal")
    echo "changed the byte at offset $off of $size in $work/data/wal"
    : >"$work/server.log"
    if start "$work/data"; then
        echo "the server started:"
        "$load" "$work/fdb.cluster" count
        kill -9 "$pid"; wait "$pid" 2>/dev/null; pid=
    else
        echo "the server refused to start"
    fi
    sed 's/^/  /' "$work/server.log" | grep -v listening
    [[ $sum == "$(md5sum <"$work/data/wal")" ]] && echo "wal unchanged" ||
        echo "wal changed: now $(stat -c %s "$work/data/wal") bytes"
    ;;
*)
    echo "usage: $0 latency|full-disk|corrupt [SERVER_BIN] [KEYS]" >&2
    exit 2
    ;;
esac
