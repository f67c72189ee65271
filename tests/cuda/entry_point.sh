#!/bin/sh
# tests/cuda/entry_point.sh SERVER STUB_DIR NODRIVER_DIR PROGRAM
# cudaGetDriverEntryPoint through the runtime stub (specs/cudart/entry_point.c):
#  1. with apigen's driver stub as the process's libcuda.so.1 (STUB_DIR), one
#     apigen-server-cuda-family: the pointer is the driver stub's own
#     cuGetProcAddress answer, calling it answers as cuDriverGetVersion does,
#     an unknown symbol is cudaErrorSymbolNotFound (500) with status 1, NULL 1;
#  2. with another libcuda.so.1 (the toolkit's stubs library, standing for a
#     local NVIDIA driver): refused, cudaErrorNotSupported (801), one log line
#     naming the cause; the local driver is never called.
set -u
server=$1 stubdir=$2 nodriver=$3 prog=$4
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cudart-entry.XXXXXX")
spid=
cleanup() { [ -n "$spid" ] && kill "$spid" 2>/dev/null && wait "$spid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT INT TERM
fail() { echo "FAIL: $*"; for f in "$tmp"/*.out "$tmp"/*.err "$tmp"/server.log; do [ -f "$f" ] && { echo "---- $f"; cat "$f"; }; done; exit 1; }
LD_LIBRARY_PATH="$nodriver" "$server" --listen "unix://$tmp/s.sock" > "$tmp/server.log" 2>&1 &
spid=$!
i=0; while [ $i -lt 100 ] && ! grep -q listening "$tmp/server.log" 2>/dev/null; do sleep 0.05; i=$((i + 1)); done
APIGEN_SERVER="unix://$tmp/s.sock" LD_LIBRARY_PATH="$stubdir" timeout 60 "$prog" > "$tmp/stub.out" 2> "$tmp/stub.err" ||
    fail "the program over both stubs: exit $?"
for want in "cudaGetDriverEntryPoint(cuDriverGetVersion) = 0, status 0, pointer set" \
            "same pointer as the driver's cuGetProcAddress: yes" \
            "same answer as cuDriverGetVersion" \
            "cudaGetDriverEntryPointByVersion(cuMemAlloc, 12000) = 0, status 0, same pointer: yes" \
            "cudaGetDriverEntryPoint(cuNoSuchFunction) = 500, status 1, pointer NULL" \
            "cudaGetDriverEntryPoint(NULL) = 1"; do
    grep -qF "$want" "$tmp/stub.out" || fail "missing: $want"
done
# 2. the runtime stub with a libcuda.so.1 that is not apigen's
mkdir "$tmp/mixed"
ln -s "$stubdir/libcudart.so.13" "$tmp/mixed/libcudart.so.13"
for l in "$stubdir"/libapigen-guest.so*; do [ -e "$l" ] && ln -s "$l" "$tmp/mixed/"; done
ln -s "$nodriver/libcuda.so.1" "$tmp/mixed/libcuda.so.1"
APIGEN_SERVER="unix://$tmp/s.sock" LD_LIBRARY_PATH="$tmp/mixed" timeout 60 "$prog" > "$tmp/mixed.out" 2> "$tmp/mixed.err"
grep -qF "cudaGetDriverEntryPoint(cuDriverGetVersion) = 801, status 1, pointer NULL" "$tmp/mixed.out" ||
    fail "a foreign libcuda.so.1 was not refused with cudaErrorNotSupported"
grep -q "is not apigen's driver stub" "$tmp/mixed.err" || fail "no log line says why"
echo "PASS: cudaGetDriverEntryPoint hands out the driver stub's functions; a foreign driver is refused"
