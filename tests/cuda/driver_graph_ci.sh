#!/bin/sh
# tests/cuda/driver_graph_ci.sh SERVER STUB_DIR NODRIVER_DIR FAKE PROGRAM TRANSPORT
# Runs tests/cuda/driver/graph_host_ci.c (PROGRAM) through the driver stub
# against apigen-server-cuda with the stand-in graphs of
# tests/cuda/driver/fake_graph.c preloaded (FAKE; CI has no GPU) over
# TRANSPORT (unix|tcp|shm). The program checks itself; this script wants
# exit 0, one log line for the unsupported node type, and a live server.
set -u
server=$1 stubdir=$2 nodriver=$3 fake=$4 prog=$5 transport=$6
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cuda-graph-ci.XXXXXX")
spid=
cleanup() { [ -n "$spid" ] && kill "$spid" 2>/dev/null && wait "$spid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT INT TERM
case "$transport" in
unix) url="unix://$tmp/s.sock" ;;
tcp) url="tcp://127.0.0.1:0" ;;
shm) url="shm://apigen-graph-ci-$$" ;;
*) echo "unknown transport $transport"; exit 2 ;;
esac
# the toolkit's stubs library as libcuda.so.1 under the stand-in, GPU or not
LD_LIBRARY_PATH="$nodriver" LD_PRELOAD="$fake" "$server" --listen "$url" > "$tmp/server.log" 2>&1 &
spid=$!
i=0
while [ $i -lt 100 ]; do
    grep -q "listening" "$tmp/server.log" 2>/dev/null && break
    sleep 0.05; i=$((i + 1))
done
[ "$transport" = tcp ] && url=$(sed -n 's/.*listening on \([a-z]*:[^ ]*\) .*/\1/p' "$tmp/server.log" | head -1)
APIGEN_SERVER=$url APIGEN_TIMEOUT_MS=60000 LD_LIBRARY_PATH="$stubdir" timeout 120 "$prog" > "$tmp/out" 2> "$tmp/err"
rc=$?
why=
[ $rc = 0 ] || why="exit $rc"
n=$(grep -c "cuGraphAddNode_v2: node type 8 is not supported by the driver stub" "$tmp/err")
[ -z "$why" ] && [ "$n" != 1 ] && why="want one log line for the external semaphore node, got $n"
[ -z "$why" ] && ! kill -0 "$spid" 2>/dev/null && why="the server died"
if [ -n "$why" ]; then
    echo "FAIL: graph_host_ci over $transport: $why"
    sed 's/^/  | /' "$tmp/out"
    echo "  stderr:"; sed 's/^/    /' "$tmp/err"
    echo "  server log:"; sed 's/^/    /' "$tmp/server.log"
    exit 1
fi
echo "PASS: graph_host_ci over $transport"
sed 's/^/  | /' "$tmp/out"
echo "  stderr:"; sed 's/^/    /' "$tmp/err"
exit 0
