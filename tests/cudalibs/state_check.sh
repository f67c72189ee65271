#!/bin/sh
# The server's check of cuSPARSE's pointer mode: the stand-in library
# (FAKE_CUSPARSE_STUCK_MODE=1 in the server's environment) answers
# cusparseSetPointerMode with success but keeps host mode, so the guest tracks
# device mode and the library does not. examples/cusparse/spmv's first
# device-mode call (cusparseSpMV) must then be refused with
# CUSPARSE_STATUS_INVALID_VALUE and one server log line, never reach the
# library with a device address taken for host memory; the program ends
# cleanly and the server runs on.
#   state_check.sh SERVER STUB_DIR NODRIVER_DIR FAKE PROGRAM
set -u
server=$1 stubdir=$2 nodriver=$3 fake=$4 prog=$5
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cudalibs-state.XXXXXX")
spid=
cleanup() { [ -n "$spid" ] && kill "$spid" 2>/dev/null && wait "$spid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT INT TERM
drv=
ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1 ' || drv=$nodriver
FAKE_CUSPARSE_STUCK_MODE=1 LD_PRELOAD="$fake" LD_LIBRARY_PATH="$drv" "$server" --listen "unix://$tmp/s.sock" > "$tmp/server.log" 2>&1 &
spid=$!
i=0
while [ $i -lt 200 ]; do
    grep -q "listening" "$tmp/server.log" 2>/dev/null && break
    sleep 0.05; i=$((i + 1))
done
APIGEN_SERVER="unix://$tmp/s.sock" LD_LIBRARY_PATH="$stubdir" timeout 60 "$prog" > "$tmp/out" 2> "$tmp/err"
rc=$?
if [ $rc = 1 ] && grep -q "pointer mode now: device" "$tmp/out" &&
   grep -q "cusparseSpMV(.*): CUSPARSE_STATUS_INVALID_VALUE" "$tmp/out" &&
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
