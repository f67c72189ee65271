#!/bin/sh
# bench/run-gpu.sh: on a machine with an NVIDIA GPU and the CUDA 13 toolkit,
# build the cudart stub, its server, apigen-bench and the CUDA bench worker
# from the committed generated/ sources, then run the worker natively and
# forwarded over unix, tcp and shm and print the ratio table (apigen-bench).
#
#   bench/run-gpu.sh                 (from the repository root)
#   SWEEP=1 bench/run-gpu.sh         (then also copy bandwidth against size)
#
# Environment: BUILD (default build-bench-gpu), CUDA_ARCH (nvcc -arch,
# default native), TRANSPORTS (default unix,tcp,shm), BENCH_COPY_MB (default
# 256), ROUNDS (apigen-bench --rounds: native and forwarded take turns N
# times and each cell is the best of N; default 1), SERVER_ARGS (extra server options; default "--isolation thread", as
# the earlier tables; SERVER_ARGS="" runs cudart's default, a process per
# session, which adopts shm:// connections too), SWEEP=1 (after the table,
# apigen-bench --sweep: cudaMemcpy bandwidth from 4 KiB to SWEEP_MAX, default
# 1G, pageable and cudaMallocHost, natively and over each transport, into
# SWEEP_OUT, default BUILD/sweep-cuda.tsv, drawn by bench/plot.sh into the
# same name .svg when gnuplot is installed; give the arena room for the
# largest pinned buffer, e.g. APIGEN_ARENA=1536M), BENCH_CPUS (apigen-bench
# --cpus GUEST:SERVER, e.g. 2:3: every run on the same two cores; default
# unpinned), TCP_VARIANTS=1 (after the table, the plain-C tcp stream with
# each bulk choice: socket buffers, MSG_ZEROCOPY, 2 and 4 connections),
# NETWORK=1 (then, with the exa example API, no GPU needed: the trace model
# checked on loopback, bench/model-check.sh, and LZ4/zstd on bulk payloads,
# apigen-bench-compress), and any APIGEN_* setting for both sides.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 1
build=${BUILD:-build-bench-gpu}
arch=${CUDA_ARCH-native}
if [ -z "${CUDA_HOME:-}" ]; then
    if command -v nvcc >/dev/null 2>&1; then CUDA_HOME=$(dirname "$(dirname "$(command -v nvcc)")")
    else CUDA_HOME=/usr/local/cuda; fi
fi
export CUDA_HOME PATH="$CUDA_HOME/bin:$PATH"
reallib=$CUDA_HOME/lib64
[ -e "$reallib/libcudart.so.13" ] || reallib=$CUDA_HOME/targets/$(uname -m)-linux/lib
case $build in /*) ;; *) build=$root/$build ;; esac
mkdir -p "$build"
echo "== $(date -u '+%Y-%m-%d %H:%M UTC'), $(uname -n), $(nproc) cores"
command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
cmake -S . -B "$build" -DAPIGEN_BUILD_GENERATOR=OFF -DCMAKE_BUILD_TYPE=Release \
      -DCUDAToolkit_ROOT="$CUDA_HOME" -DAPIGEN_CUDA_ARCH="$arch" > "$build/bench.configure.log" 2>&1 ||
    { cat "$build/bench.configure.log"; exit 1; }
extra=
[ "${NETWORK:-0}" = 1 ] && extra="exa_stub apigen-server-exa exa_demo exa_bulk bench_exa apigen-trace-model"
# shellcheck disable=SC2086 # extra: split on purpose
cmake --build "$build" -j"$(nproc)" --target cudart_stub apigen-server-cudart apigen-bench bench_cuda_worker $extra \
    > "$build/bench.build.log" 2>&1 || { tail -n 40 "$build/bench.build.log"; exit 1; }
sargs=
for a in ${SERVER_ARGS---isolation thread}; do sargs="$sargs --server-arg $a"; done
echo "== apigen-bench --worker bench_cuda (BENCH_COPY_MB=${BENCH_COPY_MB:-256}, server args: ${SERVER_ARGS---isolation thread})"
# shellcheck disable=SC2086 # sargs: split on purpose
"$build/bench/apigen-bench" --worker "$build/bench/bench_cuda" $sargs \
    --server "$build/examples/cuda/apigen-server-cudart" \
    --native-dir "$reallib" --stub-dir "$build/stub" --transports "${TRANSPORTS:-unix,tcp,shm}" \
    --rounds "${ROUNDS:-1}" ${BENCH_CPUS:+--cpus "$BENCH_CPUS"} --tcp-variants "${TCP_VARIANTS:-0}" || exit 1
if [ "${NETWORK:-0}" = 1 ]; then
    echo "== bench/model-check.sh (exa: the trace model against loopback unix and tcp)"
    "$root/bench/model-check.sh" "$build"
    echo "== apigen-bench-compress 256"
    if cmake --build "$build" --target apigen-bench-compress > "$build/bench.compress.log" 2>&1; then
        "$build/bench/apigen-bench-compress" 256
    else
        echo "not built (needs liblz4-dev and libzstd-dev): $build/bench.compress.log"
    fi
fi
[ "${SWEEP:-0}" = 1 ] || exit 0
out=${SWEEP_OUT:-$build/sweep-cuda.tsv}
echo "== apigen-bench --sweep $out (SWEEP_MAX=${SWEEP_MAX:-1G}, APIGEN_ARENA=${APIGEN_ARENA:-default})"
# shellcheck disable=SC2086 # sargs: split on purpose
"$build/bench/apigen-bench" --worker "$build/bench/bench_cuda" $sargs \
    --server "$build/examples/cuda/apigen-server-cudart" \
    --native-dir "$reallib" --stub-dir "$build/stub" --transports "${TRANSPORTS:-unix,tcp,shm}" \
    --sweep "$out" --sweep-max "${SWEEP_MAX:-1G}" ${BENCH_CPUS:+--cpus "$BENCH_CPUS"} || exit 1
if command -v gnuplot >/dev/null 2>&1; then
    "$root/bench/plot.sh" "$out" "${out%.tsv}.svg"
else
    echo "gnuplot not found: draw it elsewhere with bench/plot.sh $out OUT.svg"
fi
