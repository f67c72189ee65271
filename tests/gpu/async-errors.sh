#!/bin/sh
# tests/gpu/async-errors.sh: queued cuBLAS calls over NVIDIA's libraries
# (docs/internals.md "Errors of queued calls", spec `async_repeats`). Builds
# the CUDA family's stubs and apigen-server-cuda-family (as
# tests/gpu/family-libs.sh: it finds nvml.h and libnvidia-ml.so.1 the same
# way, NVML_INCLUDE / NVML_LIB) and tests/cublas/async_loop.c, and runs the
# program natively and forwarded over unix, with APIGEN_TRACE, then forwarded
# with APIGEN_REPEAT=0 (the control: every GEMM synchronous). Checks:
#   - stdout and exit status identical natively and in both forwarded runs
#     (50 GEMMs on cudaMalloc memory checked against the CPU; the CUBLAS_OP_T
#     GEMM the CI fake refuses is one NVIDIA's cuBLAS accepts: all three say so);
#   - round trips of cublasSgemm_v2: at most 2 (the first of the loop's values
#     and the OP_T one, each sent sync once: cuBLAS checked them at the call),
#     and 51 with APIGEN_REPEAT=0; cublasSetStream_v2: none.
# Prints the counts; with OUT set the logs go to $OUT/async-errors.
#   tests/gpu/async-errors.sh            (from the repository root)
# Environment: BUILD (default build-gpu-family: shares family-libs.sh's build).
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 1
build=${BUILD:-build-gpu-family}
case $build in /*) ;; *) build=$root/$build ;; esac
if [ -z "${CUDA_HOME:-}" ]; then
    if command -v nvcc >/dev/null 2>&1; then CUDA_HOME=$(dirname "$(dirname "$(command -v nvcc)")")
    else CUDA_HOME=/usr/local/cuda; fi
fi
export CUDA_HOME PATH="$CUDA_HOME/bin:$PATH"
reallib=$CUDA_HOME/lib64
[ -e "$reallib/libcublas.so.13" ] || reallib=$CUDA_HOME/targets/$(uname -m)-linux/lib
mkdir -p "$build"
if [ -n "${OUT:-}" ]; then logs=$OUT/async-errors; mkdir -p "$logs"; else logs=$(mktemp -d "${TMPDIR:-/tmp}/apigen-async-errors.XXXXXX"); fi
inc=${NVML_INCLUDE:-}
[ -z "$inc" ] && [ -f /opt/apigen/nvml/include/nvml.h ] && inc=/opt/apigen/nvml/include
if [ -z "$inc" ]; then
    for d in "$CUDA_HOME/include" /usr/include; do [ -f "$d/nvml.h" ] && { inc=$d; break; }; done
fi
[ -n "$inc" ] && [ -f "$inc/nvml.h" ] || { echo "async-errors.sh: no nvml.h (set NVML_INCLUDE)"; exit 1; }
nvlib=${NVML_LIB:-$(ldconfig -p 2>/dev/null | sed -n 's/.*libnvidia-ml.so.1 (libc6,x86-64) => //p' | head -n 1)}
[ -n "$nvlib" ] && [ -e "$nvlib" ] || { echo "async-errors.sh: no libnvidia-ml.so.1 (set NVML_LIB)"; exit 1; }
nvlib=$(readlink -f "$nvlib")
command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L
echo "== build ($build)"
cmake -S . -B "$build" -DAPIGEN_BUILD_GENERATOR=OFF -DCMAKE_BUILD_TYPE=Release \
      -DCUDAToolkit_ROOT="$CUDA_HOME" -DAPIGEN_NVML_INCLUDE_DIR="$inc" -DAPIGEN_NVML_LIBRARY="$nvlib" \
      > "$logs/configure.log" 2>&1 || { tail -n 40 "$logs/configure.log"; exit 1; }
cmake --build "$build" -j"$(nproc)" --target cuda_stub cudart_stub cublas_stub \
      apigen-server-cuda-family cublas_async_loop > "$logs/build.log" 2>&1 ||
    { tail -n 50 "$logs/build.log"; exit 1; }
stub=$build/stub
server=$build/examples/cuda/apigen-server-cuda-family
prog=$build/tests/cublas/cublas_async_loop
[ -x "$server" ] && [ -x "$prog" ] || { echo "async-errors.sh: no server or program built"; exit 1; }
sockdir=$(mktemp -d "${TMPDIR:-/tmp}/apigen-ae-sock.XXXXXX")
"$server" --listen "unix://$sockdir/s.sock" > "$logs/server.log" 2>&1 &
spid=$!
cleanup() {
    kill "$spid" 2>/dev/null; wait "$spid" 2>/dev/null
    rm -rf "$sockdir"
    if [ -z "${OUT:-}" ]; then [ "${KEEP:-0}" = 1 ] && echo "logs: $logs" || rm -rf "$logs"; fi
}
trap cleanup EXIT INT TERM
i=0
while [ $i -lt 200 ] && ! grep -q listening "$logs/server.log"; do sleep 0.05; i=$((i + 1)); done
rc=0
LD_LIBRARY_PATH=$reallib timeout 300 "$prog" > "$logs/native.out" 2> "$logs/native.err"
nrc=$?
for run in repeat control; do
    rep=1; [ $run = control ] && rep=0
    APIGEN_REPEAT=$rep APIGEN_SERVER="unix://$sockdir/s.sock" APIGEN_TRACE="$logs/$run.trace" \
        LD_LIBRARY_PATH="$stub:$reallib" timeout 300 "$prog" > "$logs/$run.out" 2> "$logs/$run.err"
    frc=$?
    if [ "$frc" != "$nrc" ] || ! cmp -s "$logs/native.out" "$logs/$run.out"; then
        echo "FAIL: $run: exit $frc (native $nrc) or stdout differs"; diff -u "$logs/native.out" "$logs/$run.out"; rc=1
    fi
done
n() { grep -c "apigen wire \[[0-9]*\]: rt $2 " "$logs/$1.trace"; }
g=$(n repeat cublasSgemm_v2) gc=$(n control cublasSgemm_v2) s=$(n repeat cublasSetStream_v2)
echo "cublasSgemm_v2 round trips: $g (async_repeats), $gc (APIGEN_REPEAT=0); cublasSetStream_v2: $s"
[ "$g" -le 2 ] || { echo "FAIL: the loop's GEMMs were not queued after the first"; rc=1; }
[ "$gc" = 51 ] || { echo "FAIL: APIGEN_REPEAT=0 did not send every GEMM sync ($gc)"; rc=1; }
[ "$s" = 0 ] || { echo "FAIL: cublasSetStream_v2 made round trips"; rc=1; }
sed 's/^/  | /' "$logs/native.out"
[ $rc = 0 ] && echo "PASS: async-errors (native and forwarded identical; the GEMMs queued once cuBLAS accepted their values)"
exit $rc
