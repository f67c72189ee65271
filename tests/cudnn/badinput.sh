#!/bin/sh
# Bad input through the stubs to SERVER over TRANSPORT: examples/cudnn/
# badinput (forged handles and descriptors, a forged descriptor inside a
# descriptor array, host memory and another client's memory as tensors and
# variant pack pointers, workspaces too small and past their allocation,
# element counts that lie, an unknown attribute type) must print exactly
# EXPECTED and exit 0; the server must still be running afterwards.
#   badinput.sh SERVER STUB_DIR TRANSPORT EXPECTED PROGRAM
set -u
server=$1 stubdir=$2 transport=$3 expected=$4 prog=$5
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cudnn-bad.XXXXXX")
spid=
cleanup() { [ -n "$spid" ] && kill "$spid" 2>/dev/null && wait "$spid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT INT TERM
case "$transport" in
unix) url="unix://$tmp/s.sock" ;;
tcp) url="tcp://127.0.0.1:0" ;;
shm) url="shm://apigen-cudnn-bad-$$" ;;
*) echo "unknown transport $transport"; exit 2 ;;
esac
"$server" --listen "$url" > "$tmp/server.log" 2>&1 &
spid=$!
i=0
while [ $i -lt 100 ]; do
    grep -q "listening" "$tmp/server.log" 2>/dev/null && break
    sleep 0.05; i=$((i + 1))
done
[ "$transport" = tcp ] && url=$(sed -n 's/.*listening on \([a-z]*:[^ ]*\) .*/\1/p' "$tmp/server.log" | head -1)
APIGEN_SERVER=$url LD_LIBRARY_PATH="$stubdir" timeout 120 "$prog" > "$tmp/out" 2> "$tmp/err"
rc=$?
if [ $rc != 0 ] || ! cmp -s "$expected" "$tmp/out" || ! kill -0 "$spid" 2>/dev/null; then
    echo "FAIL: badinput over $transport: exit $rc"
    diff -u "$expected" "$tmp/out" | sed 's/^/  /'
    kill -0 "$spid" 2>/dev/null || echo "  the server is gone"
    echo "  stderr:"; sed 's/^/    /' "$tmp/err"
    echo "  server log:"; sed 's/^/    /' "$tmp/server.log"
    exit 1
fi
echo "PASS: badinput over $transport: every bad input failed cleanly, the server runs on"
sed 's/^/  | /' "$tmp/out"
exit 0
