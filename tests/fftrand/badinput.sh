#!/bin/sh
# Bad input through the stubs to apigen-server-cuda-family (SERVER) over
# TRANSPORT, with PRELOAD (the fake device and libraries of tests/fftrand)
# in the server: PROGRAM (examples/cufft/badinput, examples/curand/badinput:
# forged and destroyed plans or generators, memory the client never
# allocated, a work area or buffer too small) must print exactly EXPECTED
# and exit 0, and the server must still be running afterwards.
#   badinput.sh SERVER STUB_DIR LIBDIR PRELOAD TRANSPORT EXPECTED PROGRAM
set -u
server=$1 stubdir=$2 libdir=$3 preload=$4 transport=$5 expected=$6 prog=$7
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fftrand-bad.XXXXXX")
spid=
cleanup() { [ -n "$spid" ] && kill "$spid" 2>/dev/null && wait "$spid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT INT TERM
case "$transport" in
unix) url="unix://$tmp/s.sock" ;;
tcp) url="tcp://127.0.0.1:0" ;;
shm) url="shm://apigen-fftrand-bad-$$" ;;
*) echo "unknown transport $transport"; exit 2 ;;
esac
LD_PRELOAD="$preload" LD_LIBRARY_PATH="$libdir" "$server" --listen "$url" > "$tmp/server.log" 2>&1 &
spid=$!
i=0
while [ $i -lt 200 ]; do
    grep -q "listening" "$tmp/server.log" 2>/dev/null && break
    sleep 0.05; i=$((i + 1))
done
[ "$transport" = tcp ] && url=$(sed -n 's/.*listening on \([a-z]*:[^ ]*\) .*/\1/p' "$tmp/server.log" | head -1)
APIGEN_SERVER=$url LD_LIBRARY_PATH="$stubdir" timeout 120 "$prog" > "$tmp/out" 2> "$tmp/err"
rc=$?
name=$(basename "$(dirname "$prog")")/$(basename "$prog")
if [ $rc != 0 ] || ! cmp -s "$expected" "$tmp/out" || ! kill -0 "$spid" 2>/dev/null; then
    echo "FAIL: $name over $transport: exit $rc"
    diff -u "$expected" "$tmp/out" | sed 's/^/  /'
    kill -0 "$spid" 2>/dev/null || echo "  the server is gone"
    echo "  stderr:"; sed 's/^/    /' "$tmp/err"
    echo "  server log:"; sed 's/^/    /' "$tmp/server.log"
    exit 1
fi
echo "PASS: $name over $transport: every bad input failed cleanly, the server runs on"
sed 's/^/  | /' "$tmp/out"
exit 0
