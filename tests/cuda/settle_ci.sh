#!/bin/sh
# tests/cuda/settle_ci.sh SERVER STUB_DIR LIB_DIR FAKE PROGRAM TRANSPORT FN ELIDED
# Synchronizations answered in the guest (runtime/settle.c, apigen_work_*):
# PROGRAM (tests/cuda/settle_rt.cu or tests/cuda/driver/settle_ci.c) runs
# natively with the stand-in device FAKE preloaded (LIB_DIR first on its
# library path: the toolkit's stubs library as libcuda.so.1 for the
# driver's), then through the stub (STUB_DIR) against SERVER with FAKE
# preloaded, over TRANSPORT (unix|tcp|shm), traced, and once more with
# APIGEN_CACHE=0 (every synchronization asked). The three outputs must be
# identical, and the guest must have answered exactly ELIDED calls of FN
# itself ("FN(...) = N [cached" in its trace, an error kept too; none with APIGEN_CACHE=0): the
# cases the program marks "elided", no other.
set -u
server=$1 stubdir=$2 libdir=$3 fake=$4 prog=$5 transport=$6 fn=$7 want=$8
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cuda-settle-ci.XXXXXX")
spid=
cleanup() { [ -n "$spid" ] && kill "$spid" 2>/dev/null && wait "$spid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT INT TERM
LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" LD_PRELOAD="$fake" timeout 60 "$prog" \
    > "$tmp/native" 2>&1 || { echo "FAIL: the native run"; cat "$tmp/native"; exit 1; }
run() { # NAME [ENV=VALUE...]: a fresh server, the forwarded run, its trace
    name=$1
    shift
    case "$transport" in
    unix) url="unix://$tmp/$name.sock" ;;
    tcp) url="tcp://127.0.0.1:0" ;;
    shm) url="shm://apigen-settle-ci-$$-$name" ;;
    *) echo "unknown transport $transport"; exit 2 ;;
    esac
    LD_LIBRARY_PATH="$libdir" LD_PRELOAD="$fake" "$server" --listen "$url" > "$tmp/$name.log" 2>&1 &
    spid=$!
    i=0
    while [ $i -lt 100 ] && ! grep -q "listening" "$tmp/$name.log" 2>/dev/null; do sleep 0.05; i=$((i + 1)); done
    [ "$transport" = tcp ] && url=$(sed -n 's/.*listening on \([a-z]*:[^ ]*\) .*/\1/p' "$tmp/$name.log" | head -1)
    env "$@" APIGEN_TRACE="$tmp/$name.trace" APIGEN_SERVER="$url" APIGEN_TIMEOUT_MS=60000 \
        LD_LIBRARY_PATH="$stubdir" timeout 60 "$prog" > "$tmp/$name" 2> "$tmp/$name.err"
    rc=$?
    kill "$spid" 2>/dev/null
    wait "$spid" 2>/dev/null
    spid=
    [ $rc = 0 ] || { echo "FAIL: the forwarded run ($name) exited $rc"; cat "$tmp/$name" "$tmp/$name.err" "$tmp/$name.log"; exit 1; }
}
run kept
run asked APIGEN_CACHE=0
rc=0
for name in kept asked; do
    if ! diff -u "$tmp/native" "$tmp/$name"; then
        echo "FAIL: forwarded ($name) differs from native (above)"
        rc=1
    fi
done
kept=$(grep -c "] trace: $fn(.*) = [0-9]* \[cached" "$tmp/kept.trace")
asked=$(grep -c "] trace: $fn(.*) = [0-9]* \[cached" "$tmp/asked.trace")
[ "$kept" = "$want" ] || { echo "FAIL: $fn answered in the guest $kept times, want $want"; rc=1; }
[ "$asked" = 0 ] || { echo "FAIL: $fn answered in the guest $asked times with APIGEN_CACHE=0"; rc=1; }
[ $rc = 0 ] && echo "PASS: $(basename "$prog") over $transport: identical to native; $fn answered in the guest $kept times, as the program marks"
sed 's/^/  | /' "$tmp/native"
exit $rc
