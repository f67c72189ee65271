#!/bin/sh
# tests/gpu/tcp-copy.sh: issue 16 item 3 on a machine with an NVIDIA GPU and
# the CUDA 13 toolkit. Builds the cudart stub, its server and
# bench/tcp_copy.c (Release, from the committed generated/ sources), then
# bench/tcp-copy.sh: natively, then over tcp and unix (a fresh server each),
# 64 and 256 MiB cudaMemcpy H2D/D2H from pageable and cudaMallocHost memory
# (incompressible data, checked on the way back), each next to the plain-C
# socket stream of the same size measured in the same run, the same stream
# over 4 connections, and 4-byte copies (latency). Prints numbers only.
# About a minute after the build.
#
#   tests/gpu/tcp-copy.sh                   (from the repository root)
#   CPUS=2-5:6-9 tests/gpu/tcp-copy.sh      (pinned: program and the stream's
#                                           far end on 2-5, the server on 6-9;
#                                           several CPUs each side, so that
#                                           the 4-connection stream can use them)
#
#   CPUS=2-5:6-9 PERF=1 tests/gpu/tcp-copy.sh   (then also perf of the server
#                                           and the guest during 256 MiB H2D and
#                                           D2H copies: each side's top symbols)
#
# Over tcp it runs once per APIGEN_LANES value in LANES (default "1 2 4 8":
# 1 = one connection; runtime/lanes.c), each run with its own plain-C
# stream and 4-connection stream beside it:
#
#   CPUS=2-9:10-15 LANES="1 2 4 8" tests/gpu/tcp-copy.sh
#
# Environment: BUILD (default build-tcp-copy), TRANSPORTS (default "tcp unix"),
# LANES (default "1 2 4 8"; APIGEN_LANE_PIECE and APIGEN_LANES_MIN pass through),
# SIZES (MiB, default "64 256"), TCP_COPY_ROUNDS (default 3), TCP_COPY_CONNS
# (default 4), SERVER_ARGS (default "--isolation thread"), PERF=1, NOBUILD=1.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 1
build=${BUILD:-build-tcp-copy}
case $build in /*) ;; *) build=$root/$build ;; esac
if [ -z "${CUDA_HOME:-}" ]; then
    if command -v nvcc >/dev/null 2>&1; then CUDA_HOME=$(dirname "$(dirname "$(command -v nvcc)")")
    else CUDA_HOME=/usr/local/cuda; fi
fi
export CUDA_HOME PATH="$CUDA_HOME/bin:$PATH"
mkdir -p "$build"
if [ "${NOBUILD:-0}" != 1 ]; then
    t0=$(date +%s)
    cmake -S . -B "$build" -DAPIGEN_BUILD_GENERATOR=OFF -DCMAKE_BUILD_TYPE=Release \
          -DCUDAToolkit_ROOT="$CUDA_HOME" > "$build/configure.log" 2>&1 ||
        { cat "$build/configure.log"; exit 1; }
    cmake --build "$build" -j"$(nproc)" --target cudart_stub apigen-server-cudart bench_tcp_copy \
        cudart_fake_device > "$build/build.log" 2>&1 || { tail -n 40 "$build/build.log"; exit 1; }
    echo "== built in $(($(date +%s) - t0)) s"
fi
# shellcheck disable=SC2086 # TRANSPORTS: split on purpose
LANES=${LANES-1 2 4 8} exec sh bench/tcp-copy.sh "$build" ${TRANSPORTS:-tcp unix}
