#!/bin/sh
# The server's check of a handle state: the fake library (FAKE_CUBLAS_STUCK_MODE=1
# in the server's environment) answers cublasSetPointerMode_v2 with success but
# keeps host mode, so the guest tracks device mode and the library does not.
# The examples' first device-mode call (gemm's cublasSgemm_v2) must then be
# refused with CUBLAS_STATUS_INVALID_VALUE and one server log line (the GEMM
# is queued: api.errors.async next_call, so the refusal is returned by the
# program's next cuBLAS call, the first after "pointer mode now"), never
# reach the library with a host buffer taken for device memory or the
# reverse; the program ends cleanly and the server runs on.
#   state_check.sh FAKE_SERVER STUB_DIR PROGRAM
set -u
server=$1 stubdir=$2 prog=$3
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cublas-state.XXXXXX")
spid=
cleanup() { [ -n "$spid" ] && kill "$spid" 2>/dev/null && wait "$spid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT INT TERM
FAKE_CUBLAS_STUCK_MODE=1 "$server" --listen "unix://$tmp/s.sock" > "$tmp/server.log" 2>&1 &
spid=$!
i=0
while [ $i -lt 100 ]; do
    grep -q "listening" "$tmp/server.log" 2>/dev/null && break
    sleep 0.05; i=$((i + 1))
done
APIGEN_SERVER="unix://$tmp/s.sock" LD_LIBRARY_PATH="$stubdir" timeout 60 "$prog" > "$tmp/out" 2> "$tmp/err"
rc=$?
if [ $rc = 1 ] && grep -q "pointer mode now: device" "$tmp/out" &&
   grep -A1 "pointer mode now: device" "$tmp/out" | tail -n 1 | grep -q ": CUBLAS_STATUS_INVALID_VALUE" &&
   grep -q "state pointer_mode (not the handle's)" "$tmp/server.log" && kill -0 "$spid" 2>/dev/null; then
    echo "PASS: a pointer mode the library does not have is refused before the call"
    sed 's/^/  | /' "$tmp/out"
    grep "pointer_mode" "$tmp/server.log" | sed 's/^/  server: /'
    exit 0
fi
echo "FAIL: exit $rc"
echo "  stdout:"; sed 's/^/    /' "$tmp/out"
echo "  stderr:"; sed 's/^/    /' "$tmp/err"
echo "  server log:"; sed 's/^/    /' "$tmp/server.log"
exit 1
