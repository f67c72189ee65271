#!/bin/sh
# cuda.badinput.*: bad situations give a clear message and the API's error
# value, never a crash, an abort or a hang.
#   badinput.sh CASE BUILD_DIR SOURCE_DIR
#   CASE: no_server | wrong_server | unsupported | spec_mismatch
set -u
case_=$1 build=$2 src=$3
stub=$build/stub
ex=$build/examples/cuda
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cudart-bad.XXXXXX")
spid=
cleanup() { [ -n "$spid" ] && kill "$spid" 2>/dev/null && wait "$spid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT INT TERM
fail() { echo "FAIL: $*"; echo "--- stdout"; cat "$tmp/out" 2>/dev/null; echo "--- stderr"; cat "$tmp/err" 2>/dev/null; exit 1; }
start_server() { # BINARY
    "$1" --listen "unix://$tmp/s.sock" > "$tmp/server.log" 2>&1 &
    spid=$!
    i=0
    while [ $i -lt 100 ] && ! grep -q listening "$tmp/server.log" 2>/dev/null; do sleep 0.05; i=$((i + 1)); done
}
case "$case_" in
no_server)
    for url in "unix://$tmp/nobody.sock" "tcp://127.0.0.1:1" ""; do
        APIGEN_SERVER=$url APIGEN_TIMEOUT_MS=2000 LD_LIBRARY_PATH=$stub timeout 30 "$ex/vector_add" > "$tmp/out" 2> "$tmp/err"
        rc=$?
        [ $rc = 124 ] && fail "vector_add hung with APIGEN_SERVER='$url'"
        [ $rc = 1 ] || fail "vector_add exited $rc with APIGEN_SERVER='$url' (want 1: its CHECK failed)"
        grep -q "cudaErrorDevicesUnavailable" "$tmp/out" || fail "no cudaErrorDevicesUnavailable (the spec's connection_lost) with APIGEN_SERVER='$url'"
        grep -q "apigen" "$tmp/err" || fail "no log line on stderr with APIGEN_SERVER='$url'"
        echo "ok: APIGEN_SERVER='$url': $(cat "$tmp/out"); stderr: $(head -n 1 "$tmp/err")"
    done ;;
wrong_server)
    # a server of another API (another name and fingerprint): the handshake refuses
    srv=$build/examples/exa/apigen-server-exa
    [ -x "$srv" ] || { echo "skipped: no $srv"; exit 77; }
    start_server "$srv"
    APIGEN_SERVER="unix://$tmp/s.sock" APIGEN_TIMEOUT_MS=5000 LD_LIBRARY_PATH=$stub timeout 30 "$ex/vector_add" > "$tmp/out" 2> "$tmp/err"
    rc=$?
    [ $rc = 124 ] && fail "hung against a server of another API"
    [ $rc = 1 ] || fail "exit $rc against a server of another API"
    grep -q "cudaErrorDevicesUnavailable" "$tmp/out" || fail "no cudaErrorDevicesUnavailable against a server of another API"
    echo "ok: $(cat "$tmp/out"); stderr: $(head -n 2 "$tmp/err" | tr '\n' ' ')" ;;
unsupported)
    start_server "$ex/apigen-server-cudart"
    APIGEN_SERVER="unix://$tmp/s.sock" LD_LIBRARY_PATH=$stub timeout 30 "$build/tests/cuda/cuda_unsupported" > "$tmp/out" 2> "$tmp/err"
    rc=$?
    [ $rc = 0 ] || fail "cuda_unsupported exited $rc"
    n=$(grep -c "cudaLibraryGetUnifiedFunction: not supported" "$tmp/err")
    [ "$n" = 1 ] || fail "want exactly one log line for cudaLibraryGetUnifiedFunction, got $n"
    echo "ok: $(cat "$tmp/out"); stderr: $(tr '\n' ' ' < "$tmp/err")" ;;
spec_mismatch)
    # specs/cudart.yaml edited to disagree with the header: a parameter
    # cudaDeviceGetP2PAttribute does not have, and a function the header does not declare
    apigen=$build/gen/apigen
    [ -x "$apigen" ] || { echo "skipped: the generator is not built"; exit 77; }
    mkdir -p "$tmp/specs"
    cp -r "$src/specs/cudart.yaml" "$src/specs/cudart" "$tmp/specs/"
    sed -i 's/^  cudaDeviceGetP2PAttribute: {params: {\(.*\)}}$/  cudaDeviceGetP2PAttribute: {params: {size: device, \1}}\n  cudaMemcpyWithSomethingNew: {local: true}/' "$tmp/specs/cudart.yaml"
    line=$(grep -n "^  cudaDeviceGetP2PAttribute: {params: {size: device, " "$tmp/specs/cudart.yaml" | cut -d: -f1)
    [ -n "$line" ] || fail "could not edit the spec"
    cd "$tmp"
    "$apigen" --strict specs/cudart.yaml -o "$tmp/gen" > "$tmp/out" 2> "$tmp/err"
    rc=$?
    [ $rc = 1 ] || fail "apigen exited $rc on a spec that does not match the header"
    grep -q "^specs/cudart.yaml:$line:[0-9]*: error: cudaDeviceGetP2PAttribute: .*'size'" "$tmp/err" || fail "no error naming cudaDeviceGetP2PAttribute's parameter 'size' at line $line"
    grep -q "^specs/cudart.yaml:$((line + 1)):[0-9]*: error: cudaMemcpyWithSomethingNew: " "$tmp/err" || fail "no error for the function the header lacks (--strict)"
    [ ! -e "$tmp/gen" ] || fail "output written despite errors"
    echo "ok:"; sed 's/^/  /' "$tmp/err" ;;
*) echo "unknown case $case_"; exit 2 ;;
esac
exit 0
