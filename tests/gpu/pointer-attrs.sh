#!/bin/sh
# tests/gpu/pointer-attrs.sh: cuPointerGetAttributes (tests/gpu/pointer_attrs.c)
# natively and through the driver stub over unix, on a machine with an
# NVIDIA GPU, after a build (BUILD, default build): prints both outputs and
# their difference. The stub answers an address the driver does not know
# with zeros (cuda.h: "the attributes are assigned default NULL values and
# CUDA_SUCCESS is returned"); a difference in the stack/heap/NULL rows says
# which real default is not zero. Known differences: pinned host memory's
# device pointer (the server's address of the arena, "other") and its buffer
# id (801: the guest answers pinned memory from its records and has none;
# tests/gpu/pinned-attrs.sh covers pinned memory fully).
#   BUILD=/tmp/bd sh tests/gpu/pointer-attrs.sh
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD:-$root/build}
cuda=${CUDA_HOME:-/usr/local/cuda}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pointer-attrs.XXXXXX")
spid=
cleanup() { [ -n "$spid" ] && kill "$spid" 2>/dev/null && wait "$spid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT INT TERM
cc -O1 -I"$cuda/include" -o "$tmp/pointer_attrs" "$root/tests/gpu/pointer_attrs.c" -L"$cuda/lib64/stubs" -lcuda ||
    exit 1
"$tmp/pointer_attrs" > "$tmp/native" 2>&1
echo "== native (exit $?)"; cat "$tmp/native"
"$build/examples/cuda/apigen-server-cuda" --listen "unix://$tmp/s.sock" > "$tmp/server.log" 2>&1 &
spid=$!
sleep 1
APIGEN_SERVER="unix://$tmp/s.sock" LD_LIBRARY_PATH="$build/stub-driver" "$tmp/pointer_attrs" > "$tmp/fw" 2>&1
echo "== through the driver stub (exit $?)"; cat "$tmp/fw"
echo "== difference"; diff "$tmp/native" "$tmp/fw" && echo "(none)"
