#!/usr/bin/env bash
# apigen-bench still runs: the exa worker natively and over shm://, pinned with
# --cpus, prints its table (a number in every cell of the rows below) and the
# sync call against both floors; a CPU this process may not use is refused
# with its number. Timings are printed, never asserted (bench/bench.c).
#
#   bench_smoke.sh BUILD_DIR
set -u
b=$1
out=$(mktemp)
tsv=$(mktemp)
trap 'rm -f "$out" "$tsv"' EXIT
fail() { echo "FAIL: $*"; cat "$out"; exit 1; }
ncpu=$(nproc)
pin="0:$((ncpu > 1 ? 1 : 0))"
"$b/bench/apigen-bench" --worker "$b/bench/bench_exa" --server "$b/examples/exa/apigen-server-exa" \
    --native-dir "$b/real" --stub-dir "$b/stub" --transports shm --cpus "$pin" --tsv "$tsv" > "$out" 2>&1 ||
    fail "apigen-bench --cpus $pin exited with $?"
num='[0-9]+(\.[0-9]+)?'
for row in "transport ping-pong floor \(64 B\) +us +- +$num" \
           "plain-C shared-memory rings \(64 B\) +us +- +$num" \
           "sync no-op call \(exaGetBufferSize\) +us +$num +$num +$num""x" \
           "async launch throughput \(exaLaunch +k/s +$num +$num +$num""x" \
           "sync call over shm: $num us = $num""x its transport floor \($num us\), $num""x plain-C rings"; do
    grep -Eq "$row" "$out" || fail "no line matching: $row"
done
# --tsv: the same table for scripts (bench/patterns_table.sh reads it)
grep -Eq "^transports	shm$" "$tsv" || fail "--tsv: no transports row"
grep -Eq "^floor	shm	$num$" "$tsv" || fail "--tsv: no shm floor row"
grep -Eq "^metric	sync_call	us	lo	$num	$num	sync no-op call" "$tsv" || fail "--tsv: no sync_call row"
"$b/bench/apigen-bench" --worker "$b/bench/bench_exa" --server "$b/examples/exa/apigen-server-exa" \
    --native-dir "$b/real" --stub-dir "$b/stub" --transports shm --cpus "0:$ncpu" > "$out" 2>&1 &&
    fail "--cpus 0:$ncpu was taken (this machine has CPUs 0 to $((ncpu - 1)))"
grep -q "CPU $ncpu is not one this process may run on" "$out" || fail "--cpus 0:$ncpu: no reason given"
echo "PASS: apigen-bench table over shm, pinned to $pin; a bad --cpus refused"
