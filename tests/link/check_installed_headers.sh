#!/bin/sh
# include/ holds only what is installed: every header under INCLUDE_DIR must be one of the
# installed HEADERs (a directory stands for the *.h files in it). Internal headers belong
# under src/, next to the library that owns them.
#
# usage: check_installed_headers.sh INCLUDE_DIR HEADER|DIR...
set -eu

inc=$1
shift

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

: > "$tmp/installed"
for h in "$@"; do
    if [ -d "$h" ]; then
        ls "$h"/*.h >> "$tmp/installed"
    else
        echo "$h" >> "$tmp/installed"
    fi
done
sort -u "$tmp/installed" -o "$tmp/installed"
find "$inc" -type f | sort > "$tmp/present"
comm -23 "$tmp/present" "$tmp/installed" > "$tmp/extra"
echo "$(wc -l < "$tmp/present") files under $inc, $(wc -l < "$tmp/installed") installed headers"
if [ -s "$tmp/extra" ]; then
    echo "FAIL: $(wc -l < "$tmp/extra") files under $inc are not installed (internal headers go under src/):"
    sed 's/^/  /' "$tmp/extra"
    exit 1
fi
