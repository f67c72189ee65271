#!/bin/sh
# tests/gpu/servers.sh: on a machine with an NVIDIA GPU, two apigen servers
# behind one guest (APIGEN_SERVER=url0,url1), both on the machine's GPU(s):
# examples/cuda multithread then sees one device per server and runs its
# thread 1 on server 1; the other examples run on device 0 (server 0) and
# must print what they print natively.
#
#   tests/gpu/servers.sh            (from the repository root; after
#                                    tests/gpu/run-all.sh built BUILD)
#
# Environment: BUILD (default build-gpu), T1 (server 1's transport: unix,
# tcp or shm; default tcp), GPU0 / GPU1 (the GPU each server sees, through
# CUDA_VISIBLE_DEVICES; default 0 for both), KEEP=1 to keep the logs folder.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 1
build=${BUILD:-build-gpu}
case $build in /*) ;; *) build=$root/$build ;; esac
server=$build/examples/cuda/apigen-server-cudart
stub=$build/stub
ex=$build/examples/cuda
[ -x "$server" ] && [ -x "$ex/multithread" ] ||
    { echo "servers: build first (tests/gpu/run-all.sh, BUILD=$build)"; exit 1; }
if [ -z "${CUDA_HOME:-}" ]; then
    if command -v nvcc >/dev/null 2>&1; then CUDA_HOME=$(dirname "$(dirname "$(command -v nvcc)")")
    else CUDA_HOME=/usr/local/cuda; fi
fi
reallib=$CUDA_HOME/lib64
[ -e "$reallib/libcudart.so.13" ] || reallib=$CUDA_HOME/targets/$(uname -m)-linux/lib
tmp=$(mktemp -d "${TMPDIR:-/tmp}/apigen-servers.XXXXXX")
pids=
cleanup() {
    for p in $pids; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
    [ "${KEEP:-0}" = 1 ] && echo "logs: $tmp" || rm -rf "$tmp"
}
trap cleanup EXIT INT TERM
start() { # NAME GPU URL [ARGS]
    n=$1 g=$2 u=$3
    shift 3
    CUDA_VISIBLE_DEVICES=$g APIGEN_TRACE="$tmp/$n.trace" "$server" --listen "$u" "$@" \
        > "$tmp/$n.log" 2>&1 &
    pids="$pids $!"
    i=0
    while [ $i -lt 100 ]; do
        grep -q listening "$tmp/$n.log" 2>/dev/null && break
        sleep 0.05; i=$((i + 1))
    done
}
start s0 "${GPU0:-0}" "unix://$tmp/s0.sock"
case ${T1:-tcp} in
tcp) start s1 "${GPU1:-0}" tcp://127.0.0.1:0
     url1=$(sed -n 's/.*listening on \(tcp:[^ ]*\) .*/\1/p' "$tmp/s1.log" | head -1) ;;
shm) url1=shm://apigen-servers-$$
     start s1 "${GPU1:-0}" "$url1" --isolation thread ;;
*) url1=unix://$tmp/s1.sock
   start s1 "${GPU1:-0}" "$url1" ;;
esac
export APIGEN_SERVER="unix://$tmp/s0.sock,$url1"
fwd() { APIGEN_TIMEOUT_MS=60000 LD_LIBRARY_PATH=$stub "$@"; }
bad=0

echo "== multithread over $APIGEN_SERVER"
: > "$tmp/s1.trace"
fwd "$ex/multithread" > "$tmp/mt.out" 2> "$tmp/mt.err"
rc=$?
cat "$tmp/mt.out"
ndev=$(CUDA_VISIBLE_DEVICES=${GPU0:-0} LD_LIBRARY_PATH=$reallib "$ex/multithread" 2>/dev/null | sed -n 's/.*devices used=\([0-9]*\).*/\1/p')
if [ $rc != 0 ] || ! grep -q '^PASSED' "$tmp/mt.out" ||
    ! grep -q 'devices used=2, main thread device=0' "$tmp/mt.out" ||
    ! grep -q '^thread 1: device 1, .* ok$' "$tmp/mt.out"; then
    echo "FAIL: multithread over two servers (rc $rc; natively it uses ${ndev:-?} device(s))"
    sed 's/^/  stderr: /' "$tmp/mt.err"
    bad=1
elif ! grep -q apigenCudartLaunch "$tmp/s1.trace"; then
    echo "FAIL: server 1 ran no kernel"
    bad=1
else
    echo "ok: thread 1 ran on server 1 (device 1 of 2 seen by the guest; natively ${ndev:-?})"
fi

for p in vector_add matmul streams constant graph callback; do
    [ -x "$ex/$p" ] || continue
    CUDA_VISIBLE_DEVICES=${GPU0:-0} LD_LIBRARY_PATH=$reallib "$ex/$p" > "$tmp/$p.native" 2>/dev/null
    nrc=$?
    fwd "$ex/$p" > "$tmp/$p.fwd" 2> "$tmp/$p.err"
    frc=$?
    if [ $nrc = $frc ] && cmp -s "$tmp/$p.native" "$tmp/$p.fwd"; then
        echo "ok: $p identical natively and over two servers"
    else
        echo "FAIL: $p: native exit $nrc, over two servers $frc"
        diff -u "$tmp/$p.native" "$tmp/$p.fwd" | head -20
        sed 's/^/  stderr: /' "$tmp/$p.err" | head -20
        bad=1
    fi
done
for p in $pids; do kill -0 "$p" 2>/dev/null || { echo "FAIL: a server died"; cat "$tmp"/s*.log; bad=1; }; done
[ $bad = 0 ] && echo "PASS: two servers on this machine's GPU" || echo "FAILED"
exit $bad
