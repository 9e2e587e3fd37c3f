#!/usr/bin/env bash
# Builds fuzz seed corpora from the golden captures (*.frames.jsonl under tests/vectors/).
#
#   fuzz/make_corpus.sh OUTDIR [CFDB_DECODE]
#
# Writes OUTDIR/frame/ (inputs for fuzz_frame) and OUTDIR/message/ (inputs for fuzz_message).
# fuzz_message's first byte indexes cfdb_all_messages[]; that order is read from
# `CFDB_DECODE --list` (the cfdb-decode binary). Without it, only frame seeds are written.
# CFDB_VECTORS overrides the vectors folder (default: tests/vectors next to this script).
set -euo pipefail

if [[ $# -lt 1 || $# -gt 2 ]]; then
    echo "usage: $0 OUTDIR [CFDB_DECODE]" >&2
    exit 2
fi
out=$1
decoder=${2:-}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
vectors=${CFDB_VECTORS:-$here/../tests/vectors}

list=""
if [[ -n $decoder ]]; then
    list=$("$decoder" --list)
fi

mkdir -p "$out/frame" "$out/message"
CFDB_MESSAGE_LIST=$list python3 - "$vectors" "$out" <<'EOF'
import ctypes, ctypes.util, glob, hashlib, json, os, struct, sys

vectors, out = sys.argv[1], sys.argv[2]

# XXH3-64 (seed 0) from the system libxxhash, as the frame checksum needs it.
xxh3 = None
for name in ("libxxhash.so.0", ctypes.util.find_library("xxhash")):
    if not name:
        continue
    try:
        lib = ctypes.CDLL(name)
        lib.XXH3_64bits.restype = ctypes.c_uint64
        lib.XXH3_64bits.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
        xxh3 = lambda b, lib=lib: lib.XXH3_64bits(b, len(b))
        break
    except (OSError, AttributeError):
        pass
if xxh3 is None:
    print("make_corpus: libxxhash not found, writing frame seeds without checksums only", file=sys.stderr)

# file identifier -> indices in cfdb_all_messages[] (cfdb-decode --list order)
by_file_id = {}
for i, line in enumerate(os.environ.get("CFDB_MESSAGE_LIST", "").splitlines()):
    fields = line.split()
    if fields:
        by_file_id.setdefault(int(fields[0]), []).append(i)

counts = {"frame": 0, "message": 0}
def write(kind, data):
    path = os.path.join(out, kind, hashlib.sha1(data).hexdigest())
    if not os.path.exists(path):
        with open(path, "wb") as f:
            f.write(data)
        counts[kind] += 1

def frame(token_hex, msg, checksum):
    token = bytes.fromhex(token_hex)
    payload = struct.pack("<QQ", int.from_bytes(token[:8], "big"), int.from_bytes(token[8:], "big")) + msg
    head = struct.pack("<I", len(payload))
    if checksum:
        head += struct.pack("<Q", xxh3(payload))
    return head + payload

# mode byte of fuzz_frame: bit 0 checksum, bit 1 no ConnectPacket
streams = {}
files = sorted(glob.glob(os.path.join(vectors, "**", "*.frames.jsonl"), recursive=True))
for path in files:
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            rec = json.loads(line)
            key = (path, rec.get("conn"), rec.get("dir"))
            s = streams.setdefault(key, {"connect": None, "frames": []})
            body = bytes.fromhex(rec["hex"])
            if rec.get("kind") == "connect_packet":
                s["connect"] = struct.pack("<I", len(body)) + body
            elif rec.get("kind") == "frame":
                s["frames"].append((rec["token"], body))
                for checksum in ([False, True] if xxh3 else [False]):
                    write("frame", bytes([0x02 | int(checksum)]) + frame(rec["token"], body, checksum))
                fid = struct.unpack_from("<I", body, 4)[0] if len(body) >= 8 else None
                for index in by_file_id.get(fid, []):
                    write("message", bytes([index]) + body)

for s in streams.values():
    for checksum in ([False, True] if xxh3 else [False]):
        data = b"".join(frame(t, m, checksum) for t, m in s["frames"])
        if s["connect"] is not None:
            write("frame", bytes([int(checksum)]) + s["connect"] + data)
        elif data:
            write("frame", bytes([0x02 | int(checksum)]) + data)

print(f"make_corpus: {len(files)} captures -> {counts['frame']} frame seeds, "
      f"{counts['message']} message seeds in {out}")
if not files:
    sys.exit("make_corpus: no *.frames.jsonl under " + vectors)
EOF

# fuzz_tls_rules: a few verify-peers rules covering the grammar
mkdir -p "$out/tls_rules"
i=0
for rule in 'Check.Valid=1' 'Check.Valid=0,Check.Unexpired=1' 'S.CN=cfdb-server,I.O=cfdb' \
        'Subject.OU>=serv|Root.CN<=CA' 'CN=a\,b\2c\ ' 'S.subjectAltName=DNS:localhost' \
        'subjectAltName>=URI:spiffe://' 'I.CN=cfdb test CA,R.O=cfdb|S.UID=1,S.DC=com'; do
    printf '%s' "$rule" > "$out/tls_rules/seed$i"
    i=$((i + 1))
done
