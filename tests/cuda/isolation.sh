#!/bin/sh
# cuda.isolation: tests/cuda/isolation.c natively and through the stub.
# Forwarded, every forged address must be refused (cudaErrorInvalidValue:
# the server's range check, which needs no GPU); the NULL lines must equal
# the native run's (the real runtime answers them, GPU or not). On a GPU the
# native forged lines say cudaErrorInvalidValue too.
#   isolation.sh SERVER STUB_DIR REAL_LIB_DIR PROGRAM
set -u
server=$1 stubdir=$2 realdir=$3 prog=$4
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cudart-iso.XXXXXX")
spid=
cleanup() { [ -n "$spid" ] && kill "$spid" 2>/dev/null && wait "$spid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT INT TERM
LD_LIBRARY_PATH="$realdir" timeout 60 "$prog" > "$tmp/native.out" 2>&1
nrc=$?
"$server" --listen "unix://$tmp/s.sock" > "$tmp/server.log" 2>&1 &
spid=$!
i=0
while [ $i -lt 100 ] && ! grep -q listening "$tmp/server.log" 2>/dev/null; do sleep 0.05; i=$((i + 1)); done
APIGEN_SERVER="unix://$tmp/s.sock" LD_LIBRARY_PATH="$stubdir" timeout 60 "$prog" > "$tmp/fwd.out" 2> "$tmp/fwd.err"
frc=$?
rc=0
# the program prints each answer and exits 0 (a crash, a timeout: not a pass)
[ $nrc = 0 ] && [ $frc = 0 ] || { echo "FAIL: exit status native $nrc, forwarded $frc (expected 0)"; rc=1; }
if [ "$(grep forged "$tmp/fwd.out" | grep -vc ': cudaErrorInvalidValue$')" != 0 ] ||
   [ "$(grep -c forged "$tmp/fwd.out")" != 4 ]; then
    echo "FAIL: a forged device address was not refused"; rc=1
fi
if [ "$(grep null "$tmp/native.out")" != "$(grep null "$tmp/fwd.out")" ]; then
    echo "FAIL: NULL lines differ from the native run"; rc=1
fi
echo "native:"; sed 's/^/  | /' "$tmp/native.out"
echo "forwarded:"; sed 's/^/  | /' "$tmp/fwd.out"
[ $rc = 0 ] || { echo "server log:"; sed 's/^/  | /' "$tmp/server.log"; }
[ $rc = 0 ] && echo "PASS: forged addresses refused, NULL as native"
exit $rc
