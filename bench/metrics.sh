#!/bin/sh
# bench/metrics.sh [BUILD_DIR] [ROUNDS]: what --metrics costs a call. Runs
# apigen-bench (the exa worker over shm://, sync no-op call) ROUNDS times
# (default 7) without and with `--metrics tcp://127.0.0.1:0`, alternating so
# that a change of load hits both, and prints each round and the medians.
# CPUS (default 0:1) pins the worker and the server (apigen-bench --cpus).
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
b=$(cd "${1:-$root/build}" && pwd) || exit 1
rounds=${2:-7}
echo "== $(date -u '+%Y-%m-%d %H:%M UTC'), $(uname -n), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
one() { # extra server args...: the sync call's microseconds over shm
    "$b/bench/apigen-bench" --worker "$b/bench/bench_exa" --server "$b/examples/exa/apigen-server-exa" \
        --native-dir "$b/real" --stub-dir "$b/stub" --transports shm --cpus "${CPUS:-0:1}" "$@" 2>/dev/null |
        sed -n 's/^sync no-op call (exaGetBufferSize) us *[0-9.]* *\([0-9.]*\).*/\1/p'
}
off= on=
i=0
while [ $i -lt "$rounds" ]; do
    a=$(one) z=$(one --server-arg --metrics --server-arg tcp://127.0.0.1:0)
    [ -n "$a" ] && [ -n "$z" ] || { echo "apigen-bench failed (is BUILD_DIR built with bench_exa?)"; exit 1; }
    echo "round $((i + 1)): sync call ${a} us without --metrics, ${z} us with"
    off="$off $a" on="$on $z"
    i=$((i + 1))
done
median() { printf '%s\n' $1 | sort -n | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
echo "median sync call over shm: $(median "$off") us without --metrics, $(median "$on") us with ($rounds rounds each)"
