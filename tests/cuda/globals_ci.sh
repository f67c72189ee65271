#!/bin/sh
# tests/cuda/globals_ci.sh SERVER STUB_DIR NODRIVER_DIR FAKE PROGRAM TRANSPORT
# tests/cuda/driver/globals_ci.c (PROGRAM) natively and through the driver
# stub to apigen-server-cuda over TRANSPORT (unix|tcp|shm), the stand-in
# driver of tests/cuda/driver/fake_globals.c (FAKE) preloaded into both
# (CI has no GPU); then again with APIGEN_CACHE=0. All three outputs must be
# the same, and the server's trace must show cuLibraryGetGlobal /
# cuModuleGetGlobal_v2 once per (library or module, name, context) and per
# failing call, and the stub's cuPointerGetAttribute(IS_MANAGED) once per
# first answer (specs/cuda/dev_ranges.c keeps the answers): before, every
# call of the program reached the server, each success with a second round
# trip (bench/patterns.cu `constant`: 8 of its 12 per iteration).
set -u
server=$1 stubdir=$2 nodriver=$3 fake=$4 prog=$5 transport=$6
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cuda-globals-ci.XXXXXX")
spid=
cleanup() { [ -n "$spid" ] && kill "$spid" 2>/dev/null && wait "$spid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT INT TERM
drv=
ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1 ' || drv=$nodriver
LD_LIBRARY_PATH="$drv" LD_PRELOAD="$fake" timeout 60 "$prog" > "$tmp/native" 2>&1 ||
    { echo "FAIL: the native run"; cat "$tmp/native"; exit 1; }
run() { # NAME [ENV=VALUE...]: a fresh server, the forwarded run, its trace
    name=$1
    shift
    case "$transport" in
    unix) url="unix://$tmp/$name.sock" ;;
    tcp) url="tcp://127.0.0.1:0" ;;
    shm) url="shm://apigen-globals-ci-$$-$name" ;;
    *) echo "unknown transport $transport"; exit 2 ;;
    esac
    APIGEN_TRACE="$tmp/$name.trace" LD_LIBRARY_PATH="$nodriver" LD_PRELOAD="$fake" \
        "$server" --listen "$url" > "$tmp/$name.log" 2>&1 &
    spid=$!
    i=0
    while [ $i -lt 100 ] && ! grep -q "listening" "$tmp/$name.log" 2>/dev/null; do sleep 0.05; i=$((i + 1)); done
    [ "$transport" = tcp ] && url=$(sed -n 's/.*listening on \([a-z]*:[^ ]*\) .*/\1/p' "$tmp/$name.log" | head -1)
    env "$@" APIGEN_SERVER="$url" APIGEN_TIMEOUT_MS=60000 LD_LIBRARY_PATH="$stubdir" timeout 60 "$prog" \
        > "$tmp/$name" 2> "$tmp/$name.err"
    rc=$?
    kill "$spid" 2>/dev/null
    wait "$spid" 2>/dev/null
    spid=
    [ $rc = 0 ] || { echo "FAIL: the forwarded run ($name) exited $rc"; cat "$tmp/$name.err" "$tmp/$name.log"; exit 1; }
}
run kept
run asked APIGEN_CACHE=0
rc=0
for name in kept asked; do
    if ! diff -u "$tmp/native" "$tmp/$name"; then
        echo "FAIL: forwarded output ($name) differs from native"
        rc=1
    fi
done
grep -q '^reloaded coef #2: 0 ' "$tmp/native" || { echo "FAIL: the program did not run as meant"; cat "$tmp/native"; rc=1; }
want() { # RUN FUNCTION COUNT WHY
    got=$(grep -c "server: cuda\.$2 " "$tmp/$1.trace")
    if [ "$got" != "$3" ]; then
        echo "FAIL: $2 reached the server $got times ($1 run), want $3 ($4)"
        rc=1
    fi
}
want kept cuLibraryGetGlobal 7 "coef and result in ctx0, nosuch x3, coef in ctx1, coef after the reload"
want kept cuModuleGetGlobal_v2 2 "result of each module"
want kept cuPointerGetAttribute 6 "the stub's IS_MANAGED question after each of the 6 first answers"
want asked cuLibraryGetGlobal 37 "APIGEN_CACHE=0: every call"
want asked cuModuleGetGlobal_v2 13 "APIGEN_CACHE=0: every call"
[ $rc = 0 ] && echo "PASS: globals_ci over $transport (native and forwarded identical; cuLibraryGetGlobal 7 of 37, cuModuleGetGlobal_v2 2 of 13 reach the server)"
exit $rc
