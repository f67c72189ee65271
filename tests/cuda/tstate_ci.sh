#!/bin/sh
# tests/cuda/tstate_ci.sh SERVER STUB_DIR NODRIVER_DIR FAKE PROGRAM TRANSPORT
# tests/cuda/tstate_ci.c natively (the stand-ins fake_tstate_*.c preloaded),
# then through the runtime's, the driver's and cuBLAS's stubs to one
# apigen-server-cuda-family (the stand-ins preloaded there) with kept
# answers and again with APIGEN_CACHE=0 (every question reaches the
# server): the same output all three times. Then, from the guest's trace,
# the round trips of the PyTorch-like loop (phase "loop", ITERS rounds of
# cudaGetDevice, cuDevicePrimaryCtxGetState, cublasGetMathMode,
# cudaGetLastError, cuCtxGetCurrent, cuCtxGetId of that context): with
# APIGEN_CACHE=0 every call; with kept answers the device, the primary
# context's state, the current context and its id cost one round trip each
# at most (the first round's),
# the library call and cudaGetLastError one per round.
set -u
server=$1 stubdir=$2 nodriver=$3 fake=$4 prog=$5 transport=$6
iters=100
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cuda-tstate.XXXXXX")
spid=
cleanup() { [ -n "$spid" ] && kill "$spid" 2>/dev/null && wait "$spid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT INT TERM
fail() {
    echo "FAIL: tstate_ci over $transport: $*"
    for f in "$tmp"/*.out "$tmp"/*.err "$tmp"/server.log; do [ -f "$f" ] && { echo "---- $f"; sed 's/^/  /' "$f" | tail -80; }; done
    exit 1
}
for l in libcudart.so.13 libcuda.so.1 libcublas.so.13; do
    LD_LIBRARY_PATH="$stubdir" ldd "$prog" | grep -q "$stubdir/$l" || fail "the program would not load the stub $l"
done
LD_PRELOAD=$fake LD_LIBRARY_PATH="$nodriver" timeout 60 "$prog" $iters > "$tmp/native.out" 2> "$tmp/native.err" ||
    fail "natively over the stand-ins: exit $? (the stand-ins are broken)"
case "$transport" in
unix) url="unix://$tmp/s.sock" ;;
shm) url="shm://apigen-tstate-$$" ;;
*) echo "unknown transport $transport"; exit 2 ;;
esac
LD_PRELOAD=$fake LD_LIBRARY_PATH="$nodriver" "$server" --listen "$url" > "$tmp/server.log" 2>&1 &
spid=$!
i=0
while [ $i -lt 200 ] && ! grep -q listening "$tmp/server.log" 2>/dev/null; do sleep 0.05; i=$((i + 1)); done
grep -q listening "$tmp/server.log" || fail "the server did not start"
for run in kept nocache; do
    c=1
    [ $run = nocache ] && c=0
    APIGEN_CACHE=$c APIGEN_TRACE="$tmp/$run.trace" APIGEN_SERVER=$url APIGEN_TIMEOUT_MS=60000 \
        LD_LIBRARY_PATH="$stubdir" timeout 60 "$prog" $iters > "$tmp/$run.out" 2> "$tmp/$run.err" ||
        fail "forwarded ($run): exit $?"
    cmp -s "$tmp/native.out" "$tmp/$run.out" ||
        { diff -u "$tmp/native.out" "$tmp/$run.out"; fail "forwarded ($run) answers differ from native"; }
done
grep -q "every answer the same: yes" "$tmp/native.out" || fail "the loop did not run as meant"
# round trips of the loop phase: the guest's trace lines of the calls that
# reached the server (a kept answer's line says [cached, ...]) after the
# marker that ends the phase before it
count() { # RUN FUNCTION
    awk -v f="$2(" '/cudaMemGetInfo\(/ { phase++; next }
        phase == 4 && index($0, ": " f) && !/\[cached/ { n++ } END { print n + 0 }' "$tmp/$1.trace"
}
rc=0
report=
for fn in cudaGetDevice cuDevicePrimaryCtxGetState cuCtxGetCurrent cuCtxGetId cublasGetMathMode cudaGetLastError; do
    k=$(count kept $fn) n=$(count nocache $fn)
    report="$report $fn $n->$k"
    [ "$n" = $iters ] || { echo "FAIL: $fn reached the server $n times with APIGEN_CACHE=0, want $iters"; rc=1; }
    case $fn in
    cublasGetMathMode | cudaGetLastError) want=$iters ;;
    *) want=1 ;;
    esac
    [ "$k" -le "$want" ] || { echo "FAIL: $fn reached the server $k times in $iters rounds, want at most $want"; rc=1; }
done
tk=$(awk '/cudaMemGetInfo\(/ { phase++; next } phase == 4 && /: cu[A-Za-z_]*\(/ && !/\[cached/ { n++ } END { print n + 0 }' "$tmp/kept.trace")
tn=$(awk '/cudaMemGetInfo\(/ { phase++; next } phase == 4 && /: cu[A-Za-z_]*\(/ && !/\[cached/ { n++ } END { print n + 0 }' "$tmp/nocache.trace")
[ $rc = 0 ] || fail "round trips of the loop:$report"
echo "PASS: tstate_ci over $transport: native, forwarded and forwarded with APIGEN_CACHE=0 identical ($(wc -l < "$tmp/native.out") lines);"
echo "  round trips in $iters rounds of the loop, APIGEN_CACHE=0 -> kept:$report; all calls $tn -> $tk"
exit 0
