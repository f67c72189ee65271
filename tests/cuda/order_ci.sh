#!/bin/sh
# tests/cuda/order_ci.sh SERVER STUB_DIR LIB_DIR FAKE PROGRAM TRANSPORT
# Two threads' async work on one stream runs in their call order
# (runtime/guest.c, the cross-thread path of apigen_call_async; docs/internals.md
# "Ordering across threads"). PROGRAM (tests/cuda/order_rt.cu or
# tests/cuda/driver/order_ci.c: thread A queues work, tells thread B with no
# synchronous CUDA call in between, B queues dependent work on the same
# stream and reads the result) runs natively with the stand-in device FAKE
# preloaded (LIB_DIR first on its library path: the toolkit's stubs library
# as libcuda.so.1 for the driver's), then through the stub (STUB_DIR) against
# SERVER with FAKE preloaded, over TRANSPORT (unix|tcp|shm): once as is (the
# timer flush on) and once with APIGEN_FLUSH_US=0 (A's frames stay queued
# until B's call: B's frames, were they sent first, would run first every
# time). Every run must exit 0 (the program compares each round with the
# sequential result) with output identical to the native run's. FAKE ""
# preloads nothing: a GPU's (tests/gpu/order.sh).
set -u
server=$1 stubdir=$2 libdir=$3 fake=$4 prog=$5 transport=$6
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cuda-order-ci.XXXXXX")
spid=
cleanup() { [ -n "$spid" ] && kill "$spid" 2>/dev/null && wait "$spid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT INT TERM
LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" LD_PRELOAD="$fake" timeout 60 "$prog" \
    > "$tmp/native" 2>&1 || { echo "FAIL: the native run"; cat "$tmp/native"; exit 1; }
rc=0
run() { # NAME [ENV=VALUE...]: a fresh server, the forwarded run, compared with the native one
    name=$1
    shift
    case "$transport" in
    unix) url="unix://$tmp/$name.sock" ;;
    tcp) url="tcp://127.0.0.1:0" ;;
    shm) url="shm://apigen-order-ci-$$-$name" ;;
    *) echo "unknown transport $transport"; exit 2 ;;
    esac
    LD_LIBRARY_PATH="$libdir" LD_PRELOAD="$fake" "$server" --listen "$url" > "$tmp/$name.log" 2>&1 &
    spid=$!
    i=0
    while [ $i -lt 100 ] && ! grep -q "listening" "$tmp/$name.log" 2>/dev/null; do sleep 0.05; i=$((i + 1)); done
    [ "$transport" = tcp ] && url=$(sed -n 's/.*listening on \([a-z]*:[^ ]*\) .*/\1/p' "$tmp/$name.log" | head -1)
    env "$@" APIGEN_SERVER="$url" APIGEN_TIMEOUT_MS=60000 LD_LIBRARY_PATH="$stubdir" timeout 60 "$prog" \
        > "$tmp/$name" 2> "$tmp/$name.err"
    prc=$?
    kill "$spid" 2>/dev/null
    wait "$spid" 2>/dev/null
    spid=
    if [ $prc != 0 ]; then
        echo "FAIL: the forwarded run ($name) exited $prc"
        cat "$tmp/$name" "$tmp/$name.err"
        sed 's/^/  server: /' "$tmp/$name.log" | head -20
        rc=1
    elif ! diff -u "$tmp/native" "$tmp/$name"; then
        echo "FAIL: forwarded ($name) differs from native (above)"
        rc=1
    fi
}
run timer
run queued APIGEN_FLUSH_US=0
[ $rc = 0 ] && echo "PASS: $(basename "$prog") over $transport: each round as the sequential order, identical to native"
sed 's/^/  | /' "$tmp/native"
exit $rc
