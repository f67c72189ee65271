#!/bin/sh
# Generates SPEC and compiles the output (no link: that needs the runtime):
# stub with -fvisibility=hidden, server and server main with
# -Wall -Wextra -Werror as C11, and the wire header as C++ when CXX is given.
#   compile_generated.sh APIGEN SOURCE_ROOT SPEC CC CXX|- INCLUDE_DIR...
set -eu
apigen=$1 root=$2 spec=$3 cc=$4 cxx=$5
shift 5
tmp=$(mktemp -d "${TMPDIR:-/tmp}/apigen-compile.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
cd "$root"
"$apigen" "$spec" -o "$tmp/out"
incs="-I$tmp/out -I$root/runtime"
for d in "$@"; do incs="$incs -I$d"; done
flags="-std=c11 -Wall -Wextra -Werror"
for f in "$tmp"/out/*_stub.c; do
    $cc $flags -fvisibility=hidden $incs -c "$f" -o "$tmp/stub.o"
done
for f in "$tmp"/out/*_server.c "$tmp"/out/*_server_main.c; do
    $cc $flags $incs -c "$f" -o "$tmp/$(basename "$f").o"
done
for h in "$tmp"/out/*_wire.h; do
    $cc $flags $incs -x c -fsyntax-only "$h"
    if [ "$cxx" != - ]; then
        $cxx -std=c++11 -Wall -Wextra -Werror $incs -x c++ -fsyntax-only "$h"
    fi
done
# Every symbol the stub object exports (global, default visibility) is in
# the version script; local and custom functions come from other objects.
if command -v readelf >/dev/null 2>&1; then
    readelf -Ws "$tmp/stub.o" | awk '$5 == "GLOBAL" && $6 == "DEFAULT" && $7 != "UND" {print $8}' |
        sort >"$tmp/exported"
    sed -n 's/^        \([A-Za-z_][A-Za-z0-9_]*\);$/\1/p' "$tmp"/out/*.map | sort >"$tmp/mapped"
    if [ -n "$(comm -23 "$tmp/exported" "$tmp/mapped")" ]; then
        echo "FAIL: the stub exports symbols its version script does not name:" >&2
        comm -23 "$tmp/exported" "$tmp/mapped" >&2
        exit 1
    fi
fi
echo "ok: $spec output compiles"
