#!/bin/sh
# A shared library exports its documented API and nothing else: every symbol in LIBRARY's
# dynamic symbol table (nm -D --defined-only) must be a function or object that one of the
# installed HEADERs declares. The allowed names are read from the headers themselves (their
# comments removed by the C preprocessor, no includes followed): each fdb_* or cfdb_* name
# followed by "(" in a declaration. A directory stands for the *.h files in it.
#
# usage: check_exports.sh NM CC LIBRARY HEADER|DIR...
set -eu

nm_tool=$1
cc=$2
lib=$3
shift 3

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

: > "$tmp/headers"
for h in "$@"; do
    if [ -d "$h" ]; then
        ls "$h"/*.h >> "$tmp/headers"
    else
        echo "$h" >> "$tmp/headers"
    fi
done

: > "$tmp/api"
while read -r h; do
    [ -f "$h" ] || { echo "no header $h"; exit 1; }
    "$cc" -w -fpreprocessed -dD -E -P -x c "$h" |
        grep -o '\bc\{0,1\}fdb_[A-Za-z0-9_]*[[:space:]]*(' | sed 's/[[:space:]]*($//' >> "$tmp/api"
done < "$tmp/headers"
sort -u "$tmp/api" -o "$tmp/api"
[ -s "$tmp/api" ] || { echo "no declarations in the headers given for $lib"; exit 1; }

"$nm_tool" -D --defined-only "$lib" | awk 'NF >= 3 { print $3 }' | sed 's/@.*//' | sort -u > "$tmp/exports"
[ -s "$tmp/exports" ] || { echo "no exported symbols in $lib"; exit 1; }

comm -23 "$tmp/exports" "$tmp/api" > "$tmp/extra"
echo "$(basename "$lib"): $(wc -l < "$tmp/exports") exported symbols, $(wc -l < "$tmp/api") names declared in $(wc -l < "$tmp/headers") headers"
if [ -s "$tmp/extra" ]; then
    echo "FAIL: $(basename "$lib") exports $(wc -l < "$tmp/extra") symbols no installed header declares:"
    sed 's/^/  /' "$tmp/extra"
    exit 1
fi
