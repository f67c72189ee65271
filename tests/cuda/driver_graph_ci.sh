#!/bin/sh
# tests/cuda/driver_graph_ci.sh SERVER STUB_DIR NODRIVER_DIR FAKE PROGRAM TRANSPORT
# Runs tests/cuda/driver/graph_host_ci.c (PROGRAM) through the driver stub
# against apigen-server-cuda with the stand-in graphs of
# tests/cuda/driver/fake_graph.c preloaded (FAKE; CI has no GPU) over
# TRANSPORT (unix|tcp|shm). The program checks itself; this script wants
# exit 0, one log line for the unsupported node type, and a live server.
# TRANSPORT foreign: two sessions in one server process (--isolation thread,
# unix): the second uses the first one's graph, node and executable ids,
# each refused, and the first one's node is unchanged.
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
foreign) url="unix://$tmp/s.sock" ;;
*) echo "unknown transport $transport"; exit 2 ;;
esac
# the toolkit's stubs library as libcuda.so.1 under the stand-in, GPU or not
iso=
[ "$transport" = foreign ] && iso="--isolation thread"
# shellcheck disable=SC2086
LD_LIBRARY_PATH="$nodriver" LD_PRELOAD="$fake" "$server" --listen "$url" $iso > "$tmp/server.log" 2>&1 &
spid=$!
i=0
while [ $i -lt 100 ]; do
    grep -q "listening" "$tmp/server.log" 2>/dev/null && break
    sleep 0.05; i=$((i + 1))
done
[ "$transport" = tcp ] && url=$(sed -n 's/.*listening on \([a-z]*:[^ ]*\) .*/\1/p' "$tmp/server.log" | head -1)
export APIGEN_SERVER="$url" APIGEN_TIMEOUT_MS=60000
if [ "$transport" = foreign ]; then
    mkfifo "$tmp/in"
    LD_LIBRARY_PATH="$stubdir" timeout 120 "$prog" hold < "$tmp/in" > "$tmp/hold.out" 2> "$tmp/hold.err" &
    hpid=$!
    exec 3> "$tmp/in"
    i=0
    while [ $i -lt 1200 ] && ! grep -q '^ids ' "$tmp/hold.out" 2>/dev/null; do sleep 0.05; i=$((i + 1)); done
    ids=$(sed -n 's/^ids //p' "$tmp/hold.out")
    # shellcheck disable=SC2086
    LD_LIBRARY_PATH="$stubdir" timeout 120 "$prog" foreign $ids > "$tmp/out" 2> "$tmp/err"
    rc=$?
    echo go >&3
    exec 3>&-
    wait "$hpid"
    hrc=$?
    why=
    [ -n "$ids" ] || why="the first session printed no ids"
    [ -z "$why" ] && [ $rc != 0 ] && why="the second session exited $rc"
    [ -z "$why" ] && [ $hrc != 0 ] && why="the first session exited $hrc"
    [ -z "$why" ] && ! kill -0 "$spid" 2>/dev/null && why="the server died"
    if [ -n "$why" ]; then
        echo "FAIL: graph_host_ci, another session's ids: $why"
        echo "  first session:"; sed 's/^/  | /' "$tmp/hold.out"; sed 's/^/    /' "$tmp/hold.err"
        echo "  second session:"; sed 's/^/  | /' "$tmp/out"; sed 's/^/    /' "$tmp/err"
        echo "  server log:"; sed 's/^/    /' "$tmp/server.log"
        exit 1
    fi
    echo "PASS: graph_host_ci, another session's ids refused"
    sed 's/^/  | /' "$tmp/hold.out" "$tmp/out"
    exit 0
fi
LD_LIBRARY_PATH="$stubdir" timeout 120 "$prog" > "$tmp/out" 2> "$tmp/err"
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
