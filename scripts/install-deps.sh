#!/usr/bin/env bash
# Installs what building and testing cfdb needs on Debian 12 (bookworm), as root or via sudo.
# Skips apt entirely when every package is already installed; FORCE=1 installs anyway.
set -euo pipefail

packages=(
    cmake make pkg-config       # build
    gcc                         # default compiler
    clang libclang-rt-dev llvm  # sanitizer/fuzzer runtimes, llvm-symbolizer for stack traces
    libxxhash-dev               # frame checksums (src/wire)
    libcmocka-dev               # unit tests (tests/)
    libedit-dev                 # the cfdb shell's line editing (tools/shell)
    protobuf-compiler           # protoc: the Record Layer's schema (src/layers/records), test vectors
    libprotobuf-dev             # google/protobuf/descriptor.proto for tests' Record Layer options
    libssl-dev                  # TLS (src/net), libcrypto (bench/, tools/cfdb-certs)
    gnuplot-nox                 # bench report plots
    python3                     # fuzz/make_corpus.sh
    valgrind                    # scripts/instr-budget.sh (CI's instruction-count guard)
    libsqlite3-dev sqlite3      # the SQL layer's query engine (src/layers/sql), its extension test
)

missing=()
for p in "${packages[@]}"; do
    if [[ $(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null) != installed ]]; then
        missing+=("$p")
    fi
done
if [[ ${#missing[@]} -eq 0 && ${FORCE:-0} != 1 ]]; then
    echo "install-deps: all ${#packages[@]} packages already installed"
    exit 0
fi

if ! command -v apt-get >/dev/null; then
    echo "install-deps: apt-get not found; install by hand: ${packages[*]}" >&2
    exit 1
fi
sudo=()
if [[ $(id -u) -ne 0 ]]; then
    sudo=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
echo "install-deps: installing ${missing[*]:-${packages[*]}}"
"${sudo[@]}" apt-get update -q
"${sudo[@]}" apt-get install -y -q --no-install-recommends "${packages[@]}"
