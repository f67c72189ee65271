#!/bin/sh
# The server's check of what the guest says about a matmul descriptor: the
# fake library (FAKE_CUBLASLT_STUCK_MODE=1 in the server's environment)
# answers cublasLtMatmulDescSetAttribute(POINTER_MODE) with success but keeps
# host mode, so the guest tracks device mode and the library does not.
# examples/cublasLt/matmul's first device-mode matmul must then be refused
# with CUBLAS_STATUS_INVALID_VALUE and one server log line (the matmul is
# queued, api.errors.async next_call: D stays as it was and the program's
# next cuBLASLt call returns the refusal), never reach the
# library with a device address taken for host memory or the reverse; the
# program ends cleanly and the server runs on.
#   state_check.sh FAKE_SERVER STUB_DIR PRELOAD PROGRAM
set -u
server=$1 stubdir=$2 preload=$3 prog=$4
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cublasLt-state.XXXXXX")
spid=
cleanup() { [ -n "$spid" ] && kill "$spid" 2>/dev/null && wait "$spid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT INT TERM
FAKE_CUBLASLT_STUCK_MODE=1 LD_PRELOAD="$preload" "$server" --listen "unix://$tmp/s.sock" > "$tmp/server.log" 2>&1 &
spid=$!
i=0
while [ $i -lt 100 ]; do
    grep -q "listening" "$tmp/server.log" 2>/dev/null && break
    sleep 0.05; i=$((i + 1))
done
APIGEN_SERVER="unix://$tmp/s.sock" LD_LIBRARY_PATH="$stubdir" timeout 60 "$prog" > "$tmp/out" 2> "$tmp/err"
rc=$?
sleep 0.2
if [ $rc = 1 ] && grep -q "^1\. host alpha/beta.*: yes" "$tmp/out" &&
   grep -q "^2\. device alpha/beta.*: NO" "$tmp/out" &&
   grep "failed: " "$tmp/out" | head -n 1 | grep -q "cublasLt[A-Za-z]*(.*) failed: CUBLAS_STATUS_INVALID_VALUE" &&
   grep -q "cublasLtMatmul: the guest sent pointer mode 1, the descriptor's is 0: refused" "$tmp/server.log" &&
   kill -0 "$spid" 2>/dev/null; then
    echo "PASS: a pointer mode the descriptor does not have is refused before the call"
    sed 's/^/  | /' "$tmp/out"
    grep "refused" "$tmp/server.log" | sed 's/^/  server: /'
    exit 0
fi
echo "FAIL: exit $rc"
echo "  stdout:"; sed 's/^/    /' "$tmp/out"
echo "  stderr:"; sed 's/^/    /' "$tmp/err"
echo "  server log:"; sed 's/^/    /' "$tmp/server.log"
exit 1
