#!/usr/bin/env bash
# Soak test of cfdb-server: runs a durable server for DURATION seconds (default one
# hour) under a mixed load with hostile clients, and prints one line every INTERVAL seconds
# (default 60) with the server's RSS, CPU, descriptors and data directory size, and the
# latency of the normal load over that interval. Not part of CI.
#
#   scripts/soak-server.sh [BUILD_DIR]        (default build; configured with cmake already
#                                              or configured here)
#   DURATION=3600 INTERVAL=60 KEYS=100000 scripts/soak-server.sh
#
# Load, all at once:
#   - normal: read-modify-write transactions and 100-row range reads, one after another
#     (scripts/soak-load.c "mixed", through cfdb's libfdb_c.so);
#   - never-reading: a client with 64 range reads of up to 80 KB in flight that is stopped
#     (SIGSTOP) so it never reads its replies, let go for 1 s every 5 minutes;
#   - garbage: connections that send random bytes, or a ConnectPacket then random bytes;
#   - churn: connections opened and closed at a high rate, up to 100 held half-open, a few
#     that trickle one byte a second;
#   - snapshots: a background snapshot every SNAPSHOT_EVERY seconds (default 300) through the
#     control port, besides the ones the server starts itself when its log passes 64 MB.
# At the end it checks that the server is still alive and answering, and exits 1 if not.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
build=$(realpath "${1:-build}")
DURATION=${DURATION:-3600}
INTERVAL=${INTERVAL:-60}
KEYS=${KEYS:-100000}
SNAPSHOT_EVERY=${SNAPSHOT_EVERY:-300}

[[ -f $build/CMakeCache.txt ]] || cmake -S . -B "$build" >/dev/null
cmake --build "$build" -j"${JOBS:-2}" --target cfdb-server cfdb >/dev/null
server_bin=$build/src/server/cfdb-server

work=$(mktemp -d /tmp/cfdb-soak.XXXXXX)
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill -CONT "$p" 2>/dev/null || true; kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

cc -O2 -o "$work/soak-load" scripts/soak-load.c -Iinclude -L"$build/src/api" -lcfdb -lpthread \
    -Wl,-rpath,"$build/src/api"
load=$work/soak-load

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
port=$(free_port)
cport=$(free_port)
cluster=$work/fdb.cluster
"$server_bin" --listen "127.0.0.1:$port" --cluster-file "$cluster" --datadir "$work/data" \
    --control-port "$cport" 2>"$work/server.log" &
server=$!
pids+=("$server")
for _ in $(seq 100); do [[ -s $cluster ]] && break; sleep 0.1; done
[[ -s $cluster ]] || { echo "soak: the server did not start"; cat "$work/server.log"; exit 1; }
echo "soak: cfdb-server pid $server on 127.0.0.1:$port, data in $work/data, ${DURATION}s, a line every ${INTERVAL}s"
"$load" "$cluster" load "$KEYS"

# normal load
"$load" "$cluster" mixed "$DURATION" "$INTERVAL" >"$work/mixed.log" 2>&1 &
pids+=($!)

# never-reading client
"$load" "$cluster" bigreads "$((DURATION + 60))" >/dev/null 2>&1 &
reader=$!
pids+=("$reader")
(
    sleep 2
    while kill -STOP "$reader" 2>/dev/null; do
        sleep 300
        kill -CONT "$reader" 2>/dev/null || break
        sleep 1
    done
) &
pids+=($!)

# background snapshots
(
    while sleep "$SNAPSHOT_EVERY"; do
        "$server_bin" --control "$cport" snapshot start >/dev/null 2>&1 || true
    done
) &
pids+=($!)

# garbage and churn
python3 - "$port" "$DURATION" >"$work/hostile.log" 2>&1 <<'PY' &
import os, random, socket, struct, sys, time
port, duration = int(sys.argv[1]), float(sys.argv[2])
end = time.time() + duration
rng = random.Random(11)
held, trickle = [], []
counts = {"garbage": 0, "connect+garbage": 0, "churn": 0, "trickled": 0, "refused": 0}
# ConnectPacket: length, protocol version (object serializer flag), port, connection id, IPv4, flags, IPv6
connect = struct.pack("<IQHQIH16s", 40, 0x1FDB00B073000000, 0, rng.getrandbits(64), 0, 0, bytes(16))
def conn():
    s = socket.socket()
    s.settimeout(1)
    s.connect(("127.0.0.1", port))
    return s
last_trickle = time.time()
while time.time() < end:
    try:
        kind = rng.random()
        if kind < 0.3:
            s = conn(); s.sendall(os.urandom(rng.randint(1, 65536))); s.close(); counts["garbage"] += 1
        elif kind < 0.5:
            s = conn(); s.sendall(connect + os.urandom(rng.randint(1, 4096))); s.close(); counts["connect+garbage"] += 1
        else:
            s = conn(); counts["churn"] += 1
            if rng.random() < 0.5:
                held.append(s)
            else:
                s.close()
        while len(held) > 100:
            held.pop(0).close()
        if len(trickle) < 4:
            trickle.append(conn())
        if time.time() - last_trickle >= 1:
            last_trickle = time.time()
            for t in list(trickle):
                try:
                    t.send(os.urandom(1)); counts["trickled"] += 1
                except OSError:
                    trickle.remove(t); t.close()
    except OSError:
        counts["refused"] += 1
        time.sleep(0.05)
    time.sleep(0.01)
print("hostile:", counts)
PY
pids+=($!)

# one line per interval
hz=$(getconf CLK_TCK)
cpu() { awk '{print $14 + $15}' "/proc/$server/stat"; }
t0=$(date +%s)
c_prev=$(cpu)
while :; do
    sleep "$INTERVAL"
    if ! kill -0 "$server" 2>/dev/null; then
        echo "soak: cfdb-server died"; tail -20 "$work/server.log"; exit 1
    fi
    c_now=$(cpu)
    rss=$(awk '/VmRSS/ {print $2}' "/proc/$server/status")
    fds=$(ls "/proc/$server/fd" | wc -l)
    disk=$(du -sm "$work/data" | cut -f1)
    lat=$(tail -1 "$work/mixed.log" 2>/dev/null | sed 's/^t=[0-9]*s //')
    printf 't=%5ds rss=%6.1f MB cpu=%5.1f%% fds=%4d data=%4d MB | %s\n' "$(( $(date +%s) - t0 ))" \
        "$(echo "$rss / 1024" | bc -l)" "$(echo "($c_now - $c_prev) * 100 / $hz / $INTERVAL" | bc -l)" \
        "$fds" "$disk" "$lat"
    c_prev=$c_now
    (( $(date +%s) - t0 >= DURATION )) && break
done

# still answering?
"$load" "$cluster" count
"$server_bin" --control "$cport" "snapshot status"
echo
echo "snapshots written: $(grep -c "snapshot at version .* written" "$work/server.log" || true)"
sleep 2
cat "$work/hostile.log" 2>/dev/null || true
echo "soak: done, the server survived"
