#!/bin/sh
# tests/cuda/managed_ci.sh SERVER STUB_DIR FAKE_DEVICE PROGRAM EXPECTED TRANSPORT
# Runs tests/cuda/managed_ci (PROGRAM) through the cudart stub against
# apigen-server-cudart with tests/cuda/fake_device.c preloaded (no GPU in
# CI) over TRANSPORT (unix|tcp|shm) and compares its output with EXPECTED.
# The output is the same over every transport (managed memory is mirrored
# by copies, with or without the shared-memory arena).
set -u
server=$1 stubdir=$2 fake=$3 prog=$4 expected=$5 transport=$6
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cudart-managed.XXXXXX")
spid=
cleanup() { [ -n "$spid" ] && kill "$spid" 2>/dev/null && wait "$spid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT INT TERM
case "$transport" in
unix) url="unix://$tmp/s.sock" ;;
tcp) url="tcp://127.0.0.1:0" ;;
shm) url="shm://apigen-managed-$$" ;;
*) echo "unknown transport $transport"; exit 2 ;;
esac
iso=
[ "$transport" = shm ] && iso="--isolation thread"
# shellcheck disable=SC2086
LD_PRELOAD=$fake "$server" --listen "$url" $iso > "$tmp/server.log" 2>&1 &
spid=$!
i=0
while [ $i -lt 100 ]; do
    grep -q "listening" "$tmp/server.log" 2>/dev/null && break
    sleep 0.05; i=$((i + 1))
done
[ "$transport" = tcp ] && url=$(sed -n 's/.*listening on \([a-z]*:[^ ]*\) .*/\1/p' "$tmp/server.log" | head -1)
APIGEN_SERVER=$url APIGEN_TIMEOUT_MS=60000 LD_LIBRARY_PATH="$stubdir" timeout 120 "$prog" > "$tmp/out" 2> "$tmp/err"
rc=$?
cp "$expected" "$tmp/want" # the same over every transport
[ -n "${MANAGED_CI_SHOW:-}" ] && { cat "$tmp/out"; cat "$tmp/err"; }
if [ $rc != 0 ] || ! cmp -s "$tmp/want" "$tmp/out"; then
    echo "FAIL: managed_ci over $transport: exit $rc"
    diff -u "$tmp/want" "$tmp/out" | sed 's/^/  /'
    echo "  stderr:"; sed 's/^/    /' "$tmp/err"
    echo "  server log:"; sed 's/^/    /' "$tmp/server.log"
    exit 1
fi
echo "PASS: managed_ci over $transport ($(wc -l < "$tmp/out") lines as expected)"
exit 0
