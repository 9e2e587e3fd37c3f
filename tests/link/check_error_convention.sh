#!/bin/sh
# One error convention above the system-call layer: FoundationDB's positive error codes
# (src/common/error_codes.h). Fails when a C file under src/ returns a bare -1, a negative errno
# (-errno, -EINVAL, ...), a negated FoundationDB code (return -CFDB_..., return -1044;) or
# compares with a negative errno constant, outside src/net's system-call files (SYSCALL) and
# the allow-list (ALLOW), each entry of which gives its reason below.
#
# usage: check_error_convention.sh SOURCE_DIR
set -eu

src=$1/src

# src/net's system-call layer: these wrap epoll, sockets and OpenSSL and speak errno inside;
# what they export is a FoundationDB code (cfdb_error_from_errno is the one mapping).
SYSCALL="
src/net/event_loop.c
src/net/tcp.c
src/net/tls.c
src/net/tls_verify.c
"

# Files not converted yet, each with its reason.
ALLOW="
"

# A return of -1, -errno, -E..., -CFDB_... or a negative number; a comparison with -E...;
# a macro defined as a negative error code.
pattern='return -1;|return -errno\b|return -E[A-Z]+\b|return -CFDB_[A-Z_]+|return -[0-9]+;|[=!]= -E[A-Z]+\b|[^A-Za-z0-9_]-errno\b|#define [A-Z_]+ +\(?-[0-9]{3,}'

allowed() {
    printf '%s\n%s\n' "$SYSCALL" "$ALLOW" | awk -v f="$1" '$1 == f { found = 1 } END { exit !found }'
}

fail=0
checked=0
allowed_hits=0
for file in $(cd "$1" && find src -name '*.c' -o -name '*.h' | sort); do
    checked=$((checked + 1))
    # comments are not code: drop /* ... */ on one line and // to end of line first
    hits=$(sed -e 's#/\*.*\*/##g' -e 's#//.*##' "$1/$file" | grep -nE "$pattern" || true)
    [ -n "$hits" ] || continue
    if allowed "$file"; then
        allowed_hits=$((allowed_hits + $(printf '%s\n' "$hits" | wc -l)))
        continue
    fi
    printf '%s\n' "$hits" | sed "s#^#$file:#"
    fail=1
done

# an allow-list entry that no longer matches anything is stale: say so (it does not fail)
for f in $(printf '%s\n' "$ALLOW" | awk 'NF { print $1 }'); do
    [ -f "$1/$f" ] || { echo "allow-list: $f does not exist"; fail=1; continue; }
    if ! sed -e 's#/\*.*\*/##g' -e 's#//.*##' "$1/$f" | grep -qE "$pattern"; then
        echo "allow-list: $f has nothing left to allow: remove it from ALLOW"
    fi
done

echo "checked $checked files under src/; $allowed_hits hits in allow-listed or system-call files"
if [ $fail -ne 0 ]; then
    echo "FAIL: negative or errno error codes above the system-call layer (use src/common/error_codes.h codes)"
    exit 1
fi
