#!/bin/sh
# NVML as a member of the CUDA family (api.family: cuda), no GPU: the fake
# libnvidia-ml (tests/nvml/fake_nvml.c, two GPUs a machine) and the fake
# runtime calls (tests/cuda/fake_device.c, preloaded, FAKE_DEVICE_COUNT=2:
# CUDA device i has the UUID of the fake NVML's GPU i of the same machine).
#   family.sh SERVER STUB_DIR NVML_FAKE_DIR REAL_DIR FAKE_DEVICE NODRIVER_DIR QUERY ORDER
# SERVER is apigen-server-cuda-family, QUERY examples/nvml/nvml_query, ORDER
# tests/nvml/family_order (NVML's index i and CUDA's ordinal i: one GPU?).
#  1. one server (unix): QUERY and ORDER natively and forwarded: identical
#     stdout and exit status; ORDER's NVML and runtime calls in ONE session;
#     ORDER --mapped: the runtime's mapped pinned memory in a session that
#     NVML opened (the session's arena serves the family);
#  2. two servers (APIGEN_SERVER=unix...,tcp...; server 1 a second fake
#     machine): ORDER sees 4 GPUs through NVML and 4 CUDA devices, server 0's
#     first, and each index names one GPU through both APIs; one session on
#     each server for the process; QUERY lists both servers' GPUs with
#     global indexes;
#  3. two servers whose CUDA sees 1 GPU and NVML 2: each API numbers the
#     servers' devices by its own count (CUDA ordinal 1 = server 1's device 0).
set -u
server=$1 stubdir=$2 nvmldir=$3 realdir=$4 fakedev=$5 nodriver=$6 query=$7 order=$8
tmp=$(mktemp -d "${TMPDIR:-/tmp}/nvml-family.XXXXXX")
spid= spid1=
cleanup() {
    for p in $spid $spid1; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
    rm -rf "$tmp"
}
trap cleanup EXIT INT TERM
fail() { echo "FAIL: $*"; for f in "$tmp"/*; do [ -f "$f" ] && { echo "---- $f"; sed 's/^/  /' "$f"; }; done; exit 1; }
export FAKE_DEVICE_COUNT=2

# start LOG URL [env...]: a family server with the fakes; sets pid and url
start() {
    log=$1 u=$2; shift 2
    env "$@" LD_PRELOAD="$fakedev" LD_LIBRARY_PATH="$nodriver" APIGEN_TRACE=1 \
        "$server" --listen "$u" > "$tmp/$log" 2>&1 &
    pid=$!
    i=0
    while [ $i -lt 200 ] && ! grep -q listening "$tmp/$log" 2>/dev/null; do sleep 0.05; i=$((i + 1)); done
    grep -q listening "$tmp/$log" || fail "the server ($log) did not start"
    url=$u
    case "$u" in tcp://*) url=$(sed -n 's/.*listening on \([a-z]*:[^ ]*\) .*/\1/p' "$tmp/$log" | head -1) ;; esac
}
sessions() { grep -c "server: [a-z]* new session" "$tmp/$1"; }
# the server's trace lines come from its session processes: give them up to
# 2 s to reach the log before the server is stopped
settle() {
    j=0
    while [ $j -lt 40 ] && ! grep -q "server: [a-z]* new session" "$tmp/$1"; do sleep 0.05; j=$((j + 1)); done
    sleep 0.1
}

# ---- 1. one server ----
for p in "$query" "$order"; do
    nm=$(basename "$p")
    LD_PRELOAD="$fakedev" LD_LIBRARY_PATH="$nvmldir:$realdir" timeout 60 "$p" > "$tmp/$nm.native.out" 2> "$tmp/$nm.native.err"
    nrc=$?
    [ "$nrc" = 0 ] || fail "$nm natively over the fakes: exit $nrc"
    start "$nm.server.log" "unix://$tmp/$nm.sock"
    spid=$pid
    APIGEN_SERVER=$url APIGEN_TIMEOUT_MS=30000 LD_LIBRARY_PATH="$stubdir" timeout 60 "$p" \
        > "$tmp/$nm.fwd.out" 2> "$tmp/$nm.fwd.err"
    frc=$?
    settle "$nm.server.log"
    kill "$spid"; wait "$spid" 2>/dev/null; spid=
    [ "$nrc" = "$frc" ] && cmp -s "$tmp/$nm.native.out" "$tmp/$nm.fwd.out" ||
        { diff -u "$tmp/$nm.native.out" "$tmp/$nm.fwd.out"; fail "$nm through the family server: native exit $nrc, forwarded $frc, or the outputs differ"; }
    [ "$(sessions "$nm.server.log")" = 1 ] || fail "$nm: $(sessions "$nm.server.log") sessions for one process"
done
grep -q "server: cudart joined the session of nvml as its API 1\|server: nvml joined the session of cudart as its API 1" \
    "$tmp/family_order.server.log" || fail "NVML and the runtime are not one session"
grep -q "^NVML and CUDA name the same GPUs in the same order: yes$" "$tmp/family_order.fwd.out" || fail "no order line"
# NVML opens the session (no arena of its own): the runtime's mapped pinned
# memory still comes from the session's shared-memory arena (unix://)
start mapped.server.log "unix://$tmp/mapped.sock"
spid=$pid
APIGEN_SERVER=$url APIGEN_TIMEOUT_MS=30000 LD_LIBRARY_PATH="$stubdir" timeout 60 "$order" --mapped \
    > "$tmp/mapped.out" 2> "$tmp/mapped.err"
mrc=$?
settle mapped.server.log
kill "$spid"; wait "$spid" 2>/dev/null; spid=
printf '%s\n' "cudaHostAlloc(cudaHostAllocMapped): cudaSuccess" "cudaPointerGetAttributes: cudaSuccess, device pointer yes" \
    "cudaFreeHost: cudaSuccess" > "$tmp/mapped.want"
[ "$mrc" = 0 ] && cmp -s "$tmp/mapped.want" "$tmp/mapped.out" ||
    { diff -u "$tmp/mapped.want" "$tmp/mapped.out"; fail "a session NVML opened has no arena for the runtime"; }
grep -q "server: nvml new session" "$tmp/mapped.server.log" || fail "NVML did not open the session"
echo "PASS: one family server: nvml_query and family_order identical to native; NVML and the runtime in one session"

# ---- 2. two servers: server 0 the fake machine 0, server 1 machine 1 ----
start s0.log "unix://$tmp/two.sock"
spid=$pid u0=$url
start s1.log "tcp://127.0.0.1:0" APIGEN_FAKE_NVML_MACHINE=1
spid1=$pid u1=$url
APIGEN_SERVER="$u0,$u1" APIGEN_TIMEOUT_MS=30000 LD_LIBRARY_PATH="$stubdir" timeout 60 "$order" \
    > "$tmp/order2.out" 2> "$tmp/order2.err"
rc=$?
settle s0.log; settle s1.log
[ "$(sessions s0.log)" = 1 ] && [ "$(sessions s1.log)" = 1 ] ||
    fail "family_order over two servers: $(sessions s0.log) and $(sessions s1.log) sessions (want one on each)"
for s in s0.log s1.log; do
    grep -q "server: nvml\.nvmlDeviceGetCount_v2 " "$tmp/$s" && grep -q "server: cudart\.cudaGetDeviceCount " "$tmp/$s" ||
        fail "$s: NVML's or the runtime's count did not reach this server"
done
APIGEN_SERVER="$u0,$u1" APIGEN_TIMEOUT_MS=30000 LD_LIBRARY_PATH="$stubdir" timeout 60 "$query" \
    > "$tmp/query2.out" 2> "$tmp/query2.err"
qrc=$?
[ $rc = 0 ] || fail "family_order over two servers: exit $rc"
grep -q "^nvmlDeviceGetCount_v2: 0, 4 GPUs$" "$tmp/order2.out" || fail "NVML does not count 2 + 2 GPUs"
grep -q "^cudaGetDeviceCount: cudaSuccess, 4 devices$" "$tmp/order2.out" || fail "CUDA does not count 2 + 2 devices"
[ "$(grep -c ': one GPU$' "$tmp/order2.out")" = 4 ] || fail "an index names two GPUs"
# server 0's GPUs first: machine 0's UUIDs (...-000000000000), then machine 1's
[ "$(sed -n 's/^index \([0-3]\): nvml GPU-[0-9a-f]*-1111-2222-3333-\([0-9a-f]*\) .*/\1 \2/p' "$tmp/order2.out" | tr '\n' ' ')" = \
  "0 000000000000 1 000000000000 2 000000000001 3 000000000001 " ] || fail "not server 0's GPUs first"
[ $qrc = 0 ] || fail "nvml_query over two servers: exit $qrc"
grep -q "^count: 0 4$" "$tmp/query2.out" || fail "nvml_query: two servers of 2 GPUs each are not 4 GPUs"
[ "$(grep -c '^  index: 0 [0-3]$' "$tmp/query2.out")" = 4 ] && grep -q '^  index: 0 3$' "$tmp/query2.out" ||
    fail "nvml_query: the indexes are not the global ones"
for m in 000000000000 000000000001; do
    [ "$(grep -c "uuid: GPU-[0-9a-f]*-1111-2222-3333-$m" "$tmp/query2.out")" -ge 2 ] || fail "nvml_query: machine $m's GPUs are not listed"
done
kill "$spid" "$spid1"; wait "$spid" "$spid1" 2>/dev/null; spid= spid1=

# ---- 3. the APIs count differently (CUDA sees 1 GPU a server, NVML 2: a
#      server's CUDA_VISIBLE_DEVICES): each numbers by its own count, so
#      CUDA's ordinal 1 is server 1's device 0 and NVML's index 2 server 1's GPU 0
start s0b.log "unix://$tmp/three.sock" FAKE_DEVICE_COUNT=1
spid=$pid u0=$url
start s1b.log "tcp://127.0.0.1:0" FAKE_DEVICE_COUNT=1 APIGEN_FAKE_NVML_MACHINE=1
spid1=$pid u1=$url
APIGEN_SERVER="$u0,$u1" APIGEN_TIMEOUT_MS=30000 LD_LIBRARY_PATH="$stubdir" timeout 60 "$order" \
    > "$tmp/order3.out" 2> "$tmp/order3.err"
grep -q "^nvmlDeviceGetCount_v2: 0, 4 GPUs$" "$tmp/order3.out" && grep -q "^cudaGetDeviceCount: cudaSuccess, 2 devices$" "$tmp/order3.out" ||
    fail "counts with 1 CUDA device a server: want 4 GPUs through NVML, 2 through CUDA"
grep -q "^index 0: nvml GPU-00000000-1111-2222-3333-000000000000 (index 0, 0), cuda GPU-00000000-1111-2222-3333-000000000000 (cudaSuccess): one GPU$" "$tmp/order3.out" ||
    fail "index 0 is not server 0's first GPU through both APIs"
grep -q "^index 1: nvml GPU-55555555-1111-2222-3333-000000000000 (index 1, 0), cuda GPU-00000000-1111-2222-3333-000000000001 (cudaSuccess): NOT the same GPU$" "$tmp/order3.out" ||
    fail "CUDA's ordinal 1 is not server 1's device 0 (or NVML's index 1 not server 0's GPU 1): an API numbered by the other's count"
grep -q "^index 2: nvml GPU-00000000-1111-2222-3333-000000000001 (index 2, 0), cuda  (cudaErrorInvalidDevice): NOT the same GPU$" "$tmp/order3.out" ||
    fail "NVML's index 2 is not server 1's GPU 0"
echo "PASS: two family servers: NVML and CUDA both count 4 GPUs, server 0's first, index i one GPU through both; one session per server; nvml_query lists both servers' GPUs; with 1 CUDA device a server each API numbers by its own count"
sed 's/^/  | /' "$tmp/order2.out"
exit 0
