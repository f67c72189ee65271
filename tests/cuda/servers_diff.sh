#!/bin/sh
# PROGRAM natively and through the stub to two fresh apigen-server-cudart
# (APIGEN_SERVER=unix...,TRANSPORT...): stdout and exit status identical.
# Without a GPU both servers answer "no CUDA-capable device": the gathered
# cudaGetDeviceCount, the ordinal calls and the rest must say it exactly as
# the real library does. With a GPU, a program whose output names its
# number of devices (multithread) sees one more device per server: skipped
# (77); docs/gpu-results.md has the by-hand run.
# A native run that fails passes only as the failure EXPECT declares
# (expected_failure.sh: expect-no-gpu).
#   servers_diff.sh SERVER STUB_DIR REAL_LIB_DIR PROGRAM TRANSPORT_OF_SERVER_1 (tcp|shm) [EXPECT]
set -u
server=$1 stubdir=$2 realdir=$3 prog=$4 transport=$5 expect=${6:-}
. "$(dirname "$0")/expected_failure.sh"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cudart-servers.XXXXXX")
pids=
cleanup() {
    for p in $pids; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
    rm -rf "$tmp"
}
trap cleanup EXIT INT TERM
name=$(basename "$prog")
LD_LIBRARY_PATH="$realdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" timeout 120 "$prog" > "$tmp/native.out" 2> "$tmp/native.err"
nrc=$?
if [ "$nrc" = 0 ] && [ "$name" = multithread ]; then
    echo "SKIP: a GPU is present: over two servers $name sees a device per server"
    exit 77
fi
start() { # NAME URL [ARGS] -> server log in $tmp/NAME.log
    n=$1 u=$2
    shift 2
    APIGEN_TRACE="$tmp/$n.trace" "$server" --listen "$u" "$@" > "$tmp/$n.log" 2>&1 &
    pids="$pids $!"
    i=0
    while [ $i -lt 100 ]; do
        grep -q "listening" "$tmp/$n.log" 2>/dev/null && break
        sleep 0.05; i=$((i + 1))
    done
}
start s0 "unix://$tmp/s0.sock"
case "$transport" in
tcp) start s1 tcp://127.0.0.1:0
     url1=$(sed -n 's/.*listening on \(tcp:[^ ]*\) .*/\1/p' "$tmp/s1.log" | head -1) ;;
shm) url1="shm://apigen-cudart2-$$"
     start s1 "$url1" --isolation thread ;; # shm:// sessions cannot move to a session process yet
*) echo "unknown transport $transport"; exit 2 ;;
esac
APIGEN_SERVER="unix://$tmp/s0.sock,$url1" APIGEN_TIMEOUT_MS=60000 LD_LIBRARY_PATH="$stubdir" \
    timeout 120 "$prog" > "$tmp/fwd.out" 2> "$tmp/fwd.err"
frc=$?
if [ "$nrc" != "$frc" ] || ! cmp -s "$tmp/native.out" "$tmp/fwd.out"; then
    echo "FAIL: $name over unix + $transport: native exit $nrc, forwarded exit $frc"
    diff -u "$tmp/native.out" "$tmp/fwd.out" | sed 's/^/  /'
    echo "  forwarded stderr:"; sed 's/^/    /' "$tmp/fwd.err"
    exit 1
fi
if grep -q "lost connection" "$tmp/fwd.err"; then
    echo "FAIL: $name: a server was lost"; cat "$tmp/fwd.err"; exit 1
fi
# a program that counts devices asked both servers (the count is gathered)
if grep -q cudaGetDeviceCount "$tmp/native.out" &&
    ! grep -q cudaGetDeviceCount "$tmp/s1.trace" 2>/dev/null; then
    echo "FAIL: $name: server 1 was never asked for its devices"; exit 1
fi
for p in $pids; do
    kill -0 "$p" 2>/dev/null || { echo "FAIL: a server died"; cat "$tmp"/s*.log; exit 1; }
done
expected_failure "$name" "$nrc" "$tmp/native.out" "$expect"
echo "PASS: $name over two servers (unix + $transport): identical stdout ($(wc -l < "$tmp/native.out") lines), exit $nrc"
sed 's/^/  | /' "$tmp/native.out"
exit 0
