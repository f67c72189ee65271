#!/bin/sh
# Times apigen's front half (libclang parse of cuda_runtime_api.h + all spec
# checks) with bench/cudart-minimal.yaml. Not a ctest test: it prints numbers.
# usage: bench/gen_cuda_time.sh [APIGEN] [RUNS]   (from anywhere)
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
apigen=${1:-$root/build/gen/apigen}
runs=${2:-5}
cuda=${CUDA_HOME:-/usr/local/cuda}
if [ ! -f "$cuda/include/cuda_runtime_api.h" ]; then
    echo "gen_cuda_time: no CUDA toolkit at $cuda (set CUDA_HOME); skipped"
    exit 0
fi
if [ ! -x "$apigen" ]; then
    echo "gen_cuda_time: apigen not found at $apigen (build it, or pass its path)"
    exit 1
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cd "$root" || exit 1
echo "apigen: $apigen"
echo "header: $cuda/include/cuda_runtime_api.h"
"$apigen" -I "$cuda/include" bench/cudart-minimal.yaml -o "$out/gen" 2>"$out/diag" >/dev/null
echo "diagnostics (first 50 shown by apigen): $(grep -c ': error: ' "$out/diag") errors listed; last line: $(tail -n 1 "$out/diag")"
best=
i=0
while [ "$i" -lt "$runs" ]; do
    t0=$(date +%s%N)
    "$apigen" -I "$cuda/include" bench/cudart-minimal.yaml -o "$out/gen" >/dev/null 2>&1
    t1=$(date +%s%N)
    ms=$(( (t1 - t0) / 1000000 ))
    echo "run $((i + 1)): ${ms} ms"
    if [ -z "$best" ] || [ "$ms" -lt "$best" ]; then best=$ms; fi
    i=$((i + 1))
done
echo "best of $runs: ${best} ms (target < 2000 ms)"
