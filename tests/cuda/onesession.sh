#!/bin/sh
# The CUDA runtime's and the driver's stubs in one process (api.family:
# cuda): tests/cuda/onesession.c natively and through both stubs to
# apigen-server-cuda-family over TRANSPORT. Without a GPU every call fails,
# natively and forwarded alike (the toolkit's stubs library as libcuda.so.1,
# NODRIVER_DIR, for the program and the server): same stdout and exit
# status. The server's trace must show ONE session, which the second API
# joined, and one connection of the program's thread.
#   onesession.sh SERVER STUB_DIR NODRIVER_DIR TRANSPORT PROGRAM
set -u
server=$1 stubdir=$2 nodriver=$3 transport=$4 prog=$5
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cuda-one.XXXXXX")
spid=
cleanup() { [ -n "$spid" ] && kill "$spid" 2>/dev/null && wait "$spid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT INT TERM
fail() { echo "FAIL: $*"; for f in "$tmp"/*; do echo "---- $f"; cat "$f"; done; exit 1; }
drv=
ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1 ' || drv=$nodriver
LD_LIBRARY_PATH="$stubdir" ldd "$prog" | grep -q "$stubdir/libcuda.so.1" || fail "the program would not load the driver stub"
LD_LIBRARY_PATH="$stubdir" ldd "$prog" | grep -q "$stubdir/libcudart.so.13" || fail "the program would not load the runtime stub"
LD_LIBRARY_PATH="$drv" timeout 120 "$prog" > "$tmp/native.out" 2> "$tmp/native.err"
nrc=$?
case "$transport" in
unix) url="unix://$tmp/s.sock" ;;
tcp) url="tcp://127.0.0.1:0" ;;
shm) url="shm://apigen-cuda-one-$$" ;;
*) echo "unknown transport $transport"; exit 2 ;;
esac
LD_LIBRARY_PATH="$drv" APIGEN_TRACE=1 "$server" --listen "$url" > "$tmp/server.log" 2>&1 &
spid=$!
i=0
while [ $i -lt 100 ]; do
    grep -q "listening" "$tmp/server.log" 2>/dev/null && break
    sleep 0.05; i=$((i + 1))
done
[ "$transport" = tcp ] && url=$(sed -n 's/.*listening on \([a-z]*:[^ ]*\) .*/\1/p' "$tmp/server.log" | head -1)
APIGEN_SERVER=$url APIGEN_TIMEOUT_MS=60000 LD_LIBRARY_PATH="$stubdir" timeout 120 "$prog" > "$tmp/fwd.out" 2> "$tmp/fwd.err"
frc=$?
# the session process logs its connections' joins after the program may have
# ended: wait for both before stopping the server (at most 2 s)
i=0
while [ $i -lt 40 ] && [ "$(grep -c "server: [a-z]* joined session" "$tmp/server.log")" -lt 2 ]; do
    sleep 0.05; i=$((i + 1))
done
kill "$spid"; wait "$spid" 2>/dev/null; spid=
[ "$nrc" = "$frc" ] || fail "native exit $nrc, forwarded exit $frc"
cmp -s "$tmp/native.out" "$tmp/fwd.out" || { diff "$tmp/native.out" "$tmp/fwd.out"; fail "output differs"; }
grep -q "cudaMalloc" "$tmp/fwd.out" || fail "no output"
n=$(grep -c "server: [a-z]* new session" "$tmp/server.log")
[ "$n" = 1 ] || fail "$n sessions for one process (want one for both stubs)"
grep -q "server: cuda joined the session of cudart as its API 1\|server: cudart joined the session of cuda as its API 1" "$tmp/server.log" ||
    fail "the second API did not join the first's session"
j=$(grep -c "server: [a-z]* joined session" "$tmp/server.log")
[ "$j" = 2 ] || fail "$j joined connections (want 2: the second API's join, the thread's one connection)"
grep -q "server: cuda\.cu[A-Za-z_0-9]* " "$tmp/server.log" || fail "no driver call reached the server"
grep -q "server: cudart\.cuda[A-Za-z_0-9]* " "$tmp/server.log" || fail "no runtime call reached the server"
echo "ok: $(basename "$prog") over $transport: same output, one session for the runtime and the driver"
