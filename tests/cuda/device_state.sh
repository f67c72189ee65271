#!/bin/sh
# tests/cuda/device_state.sh SERVER STUB_DIR FAKE_DEVICE PROGRAM
# tests/cuda/device_state.c natively (the stand-in device preloaded, 4
# devices) and through the cudart stub over two servers (unix and tcp, 2
# stand-in devices each: the guest's devices 0-1 on the first, 2-3 on the
# second): the same output, and cudaGetDevice reaches a server only where
# the guest cannot know the answer: the main thread's first question, the
# one after a failed cudaSetDevice, and a new thread's first. A successful
# cudaSetDevice tells the guest the device (specs/cudart.yaml), so the
# 100-call loops after one cost no round trip.
set -u
server=$1 stubdir=$2 fake=$3 prog=$4
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cudart-devstate.XXXXXX")
pids=
cleanup() { for p in $pids; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done; rm -rf "$tmp"; }
trap cleanup EXIT INT TERM
start() { # NAME URL
    FAKE_DEVICE_COUNT=2 APIGEN_TRACE=$tmp/$1.trace LD_PRELOAD=$fake "$server" --listen "$2" \
        > "$tmp/$1.log" 2>&1 &
    pids="$pids $!"
    i=0
    while [ $i -lt 100 ] && ! grep -q listening "$tmp/$1.log" 2>/dev/null; do sleep 0.05; i=$((i + 1)); done
}
start s0 "unix://$tmp/s0.sock"
start s1 tcp://127.0.0.1:0
url1=$(sed -n 's/.*listening on \(tcp:[^ ]*\) .*/\1/p' "$tmp/s1.log" | head -1)
[ -n "$url1" ] || { echo "FAIL: the tcp server did not start"; cat "$tmp/s1.log"; exit 1; }
FAKE_DEVICE_COUNT=4 LD_PRELOAD=$fake timeout 60 "$prog" > "$tmp/native" 2>&1 ||
    { echo "FAIL: the native run"; cat "$tmp/native"; exit 1; }
APIGEN_SERVER="unix://$tmp/s0.sock,$url1" LD_LIBRARY_PATH=$stubdir timeout 60 "$prog" > "$tmp/fwd" 2>&1 ||
    { echo "FAIL: the forwarded run"; cat "$tmp/fwd"; exit 1; }
rc=0
if ! diff -u "$tmp/native" "$tmp/fwd"; then
    echo "FAIL: forwarded output differs from native"
    rc=1
fi
grep -q 'cudaGetDevice x100 = 3' "$tmp/native" || { echo "FAIL: the program did not run as meant"; cat "$tmp/native"; rc=1; }
want() { # SERVER COUNT WHY
    got=$(grep -c 'cudart\.cudaGetDevice\b' "$tmp/$1.trace")
    if [ "$got" != "$2" ]; then
        echo "FAIL: cudaGetDevice reached $1 $got times, want $2 ($3)"
        rc=1
    fi
}
want s0 2 "the main thread's first question and the new thread's"
want s1 1 "the question after the failed cudaSetDevice(4) there"
[ $rc = 0 ] && echo "PASS: device_state (native and forwarded identical; cudaGetDevice round trips s0 2, s1 1)"
[ $rc = 0 ] || { echo "server traces:"; grep -h 'cudaGetDevice\|cudaSetDevice' "$tmp/s0.trace" "$tmp/s1.trace" | sed 's/^/  /'; }
exit $rc
