#!/bin/sh
# cuda.driver.badinput.*: bad situations for the CUDA driver stub give a
# clear message and a CUresult error, never a crash, an abort or a hang.
#   driver_badinput.sh CASE BUILD_DIR NODRIVER_DIR DRIVER_BASIC BAD_PROGRAM
#   CASE: no_server | wrong_server | cudart_server | handles
set -u
case_=$1 build=$2 nodriver=$3 basic=$4 bad=$5
stub=$build/stub
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cuda-bad.XXXXXX")
spid=
cleanup() { [ -n "$spid" ] && kill "$spid" 2>/dev/null && wait "$spid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT INT TERM
fail() { echo "FAIL: $*"; echo "--- stdout"; cat "$tmp/out" 2>/dev/null; echo "--- stderr"; cat "$tmp/err" 2>/dev/null; echo "--- server"; cat "$tmp/server.log" 2>/dev/null; exit 1; }
drv=
ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1 ' || drv=$nodriver
start_server() { # BINARY
    LD_LIBRARY_PATH="$drv" "$1" --listen "unix://$tmp/s.sock" > "$tmp/server.log" 2>&1 &
    spid=$!
    i=0
    while [ $i -lt 100 ] && ! grep -q listening "$tmp/server.log" 2>/dev/null; do sleep 0.05; i=$((i + 1)); done
}
# CUDA_ERROR_DEVICE_UNAVAILABLE (46): the spec's connection_lost
refused() { # WHAT
    [ $rc = 124 ] && fail "hung: $1"
    [ $rc = 1 ] || fail "exit $rc: $1 (want 1: cuInit failed)"
    grep -q "^cuInit *46$" "$tmp/out" || fail "cuInit did not return CUDA_ERROR_DEVICE_UNAVAILABLE (46): $1"
    grep -q "apigen" "$tmp/err" || fail "no log line on stderr: $1"
    echo "ok: $1: $(head -n 1 "$tmp/out"); stderr: $(head -n 2 "$tmp/err" | tr '\n' ' ')"
}
case "$case_" in
no_server)
    for url in "unix://$tmp/nobody.sock" "tcp://127.0.0.1:1" ""; do
        APIGEN_SERVER=$url APIGEN_TIMEOUT_MS=2000 LD_LIBRARY_PATH=$stub timeout 30 "$basic" x y > "$tmp/out" 2> "$tmp/err"
        rc=$?
        refused "APIGEN_SERVER='$url'"
    done ;;
wrong_server|cudart_server)
    # a server of another API (another name, another fingerprint): the handshake refuses
    srv=$build/examples/exa/apigen-server-exa
    [ "$case_" = cudart_server ] && srv=$build/examples/cuda/apigen-server-cudart
    [ -x "$srv" ] || { echo "skipped: no $srv"; exit 77; }
    start_server "$srv"
    APIGEN_SERVER="unix://$tmp/s.sock" APIGEN_TIMEOUT_MS=5000 LD_LIBRARY_PATH=$stub timeout 30 "$basic" x y > "$tmp/out" 2> "$tmp/err"
    rc=$?
    refused "a server of another API ($(basename "$srv"))" ;;
handles)
    start_server "$build/examples/cuda/apigen-server-cuda"
    APIGEN_SERVER="unix://$tmp/s.sock" APIGEN_TIMEOUT_MS=20000 LD_LIBRARY_PATH=$stub timeout 60 "$bad" > "$tmp/out" 2> "$tmp/err"
    rc=$?
    [ $rc = 0 ] || fail "the bad-input program exited $rc"
    want() { grep -qx "$1" "$tmp/out" || fail "want the line '$1'"; }
    want "forged context: 400"
    want "forged stream: 400"
    want "forged module: 400"
    want "forged function launch: 400"
    want "unsupported: 801"
    want "unsupported again: 801"
    want "bad image: 200"
    want "unknown export table: 1 NULL"
    want "unknown export table again: 1"
    want "async memset on a forged stream: 400"
    want "next sync call: the driver's own answer"
    want "cuGetProcAddress unknown: 500"
    want "done"
    n=$(grep -c "cuLibraryGetUnifiedFunction: not supported" "$tmp/err")
    [ "$n" = 1 ] || fail "want one log line for cuLibraryGetUnifiedFunction, got $n"
    grep -q "cuModuleLoadData: the image is neither" "$tmp/err" || fail "no log line for the bad image"
    n=$(grep -c "cuGetExportTable: no table for abababab-abab-abab-abab-abababababab" "$tmp/err")
    [ "$n" = 1 ] || fail "want one log line for the unknown export table, got $n"
    kill -0 "$spid" 2>/dev/null || fail "the server died"
    echo "ok:"; sed 's/^/  | /' "$tmp/out"; echo "stderr:"; sed 's/^/  /' "$tmp/err" ;;
*) echo "unknown case $case_"; exit 2 ;;
esac
exit 0
