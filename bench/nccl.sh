#!/bin/sh
# bench/nccl.sh: what a loop of NCCL all-reduces costs natively and through
# apigen's libnccl.so.2 (library mode) over unix, tcp and shm, in one run:
# microseconds per call and native/forwarded (bench_nccl_loop: one rank).
#   BUILD=build bench/nccl.sh   (on a GPU machine; COUNTS, default "1 262144")
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$root/build}
prog=$build/bench/bench_nccl_loop
[ -x "$prog" ] || { echo "nccl.sh: no $prog (build target bench_nccl_loop)"; exit 2; }
export NCCL_NVLS_ENABLE=0
nccl_dir=$(dirname "$(sed -n 's/^APIGEN_NCCL_LIBRARY:FILEPATH=//p' "$build/CMakeCache.txt")")
work=$(mktemp -d /tmp/apigen-nccl-bench.XXXXXX)
port=$(( 30000 + ($$ % 20000) ))
"$build/examples/cuda/apigen-server-cuda-family" --listen "unix://$work/s.sock" --listen "tcp://127.0.0.1:$port" \
    --listen "shm://apigen-nccl-bench-$$" > "$work/server.log" 2>&1 &
spid=$!
i=0; while [ ! -S "$work/s.sock" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
us() { sed -n 's/.*: \([0-9.]*\) us$/\1/p' "$1"; }
printf '%-22s | %-9s | %-16s | %-16s | %-16s\n' pattern native unix tcp shm
for c in ${COUNTS:-1 262144}; do
    LD_LIBRARY_PATH="$nccl_dir" "$prog" "$c" > "$work/native" 2>&1
    n=$(us "$work/native")
    row=$(printf '%-22s | %-9s' "allreduce x$c floats" "${n:-?} us")
    for t in unix tcp shm; do
        case $t in unix) url="unix://$work/s.sock" ;; tcp) url="tcp://127.0.0.1:$port" ;; shm) url="shm://apigen-nccl-bench-$$" ;; esac
        APIGEN_SERVER=$url LD_LIBRARY_PATH="$build/stub" "$prog" "$c" > "$work/$t" 2>&1
        f=$(us "$work/$t")
        r=$(awk -v a="$n" -v b="$f" 'BEGIN { if (a > 0 && b > 0) printf "%.2fx", a / b }')
        row="$row | $(printf '%-16s' "${f:-?} us ${r}")"
    done
    echo "$row"
done
kill $spid 2>/dev/null; wait $spid 2>/dev/null
rm -rf "$work"
