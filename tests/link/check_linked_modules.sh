#!/bin/sh
# Fails when a src/ module is compiled but not shipped: for every object of the static
# libraries libcfdb.so is built from, at least one of the object's global symbols must be in
# the symbol table of a product (libcfdb.so first; cfdb-server and cfdb-decode for the wire
# and common objects they share). Internal symbols are hidden from libcfdb.so's dynamic table
# by --exclude-libs but stay in the full one, which nm reads. An archive member the linker
# never pulled in has none of its symbols there.
#
# usage: check_linked_modules.sh NM "PRODUCT[:PRODUCT...]" ARCHIVE...
# Objects listed in ALLOW below are reported but do not fail the check.
set -eu

# Allow-list: object files that may stay unlinked, each with its reason here. Empty: every
# module of these libraries is shipped.
ALLOW=""

nm_tool=$1
products=$2
shift 2

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
: > "$tmp/lib"
old_ifs=$IFS
IFS=:
for product in $products; do
    "$nm_tool" --defined-only "$product" | awk 'NF >= 3 { print $3 }' > "$tmp/one"
    [ -s "$tmp/one" ] || { echo "no symbols in $product (stripped?)"; exit 1; }
    cat "$tmp/one" >> "$tmp/lib"
done
IFS=$old_ifs
sort -u -o "$tmp/lib" "$tmp/lib"
lib=$(echo "$products" | sed 's/:.*//')

fail=0
checked=0
for archive in "$@"; do
    # "archive.a:member.o:addr T name" (GNU nm -A) or "archive.a:member.o: addr T name"
    # (llvm-nm -A, as clang builds use): the member is the second ':' field, the name the last
    "$nm_tool" -A -g --defined-only "$archive" 2>/dev/null |
        awk '{ split($1, f, ":"); m = f[2]; if (NF >= 2) print m, $NF }' | sort -u > "$tmp/globals"
    for member in $(ar t "$archive"); do
        checked=$((checked + 1))
        awk -v m="$member" '$1 == m { print $2 }' "$tmp/globals" | sort -u > "$tmp/mine"
        if [ ! -s "$tmp/mine" ]; then
            echo "FAIL $(basename "$archive")/$member: defines no global symbol"
            fail=1
            continue
        fi
        if comm -12 "$tmp/mine" "$tmp/lib" | grep -q .; then
            continue
        fi
        case " $ALLOW " in
        *" $member "*) echo "allowed: $(basename "$archive")/$member is not linked into $(basename "$lib")" ;;
        *)
            echo "FAIL $(basename "$archive")/$member: compiled but not linked into any product ($products)"
            fail=1
            ;;
        esac
    done
done
echo "checked $checked objects"
exit $fail
