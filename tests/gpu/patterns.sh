#!/bin/sh
# tests/gpu/patterns.sh: the program-pattern benchmark (issue 16 item 1) on a
# machine with an NVIDIA GPU and the CUDA 13 toolkit. Builds both stubs,
# both servers, apigen-bench and bench/patterns.cu twice (bench_patterns_rt:
# nvcc -cudart shared, over the runtime stub and apigen-server-cudart;
# bench_patterns_drv: plain nvcc, the static runtime over the driver stub and
# apigen-server-cuda), then per build:
#   1. apigen-bench: the transports' 64-byte ping-pong floors, the worker
#      natively and forwarded over each transport (a fresh server each), the
#      times per iteration -> OUT/LABEL.tsv, its own table -> OUT/LABEL.bench.txt;
#   2. the same with APIGEN_TRACE=OUT/LABEL.trace (guest and servers) and
#      BENCH_PATTERN_COUNT=1: the worker runs each loop 10 and 20 times
#      between markers instead of timing it (bench/patterns.cu);
# and prints bench/patterns_table.sh's table (also OUT/table.txt): per
# pattern, build and transport the speed (native time / forwarded time), the
# guest's calls, those answered in the guest, the synchronous round trips and
# async messages per iteration, the floor (round trips x ping-pong), the
# time spent beyond native + floor, the guest's and the server's microseconds
# per iteration (traced), issue 16's target, and per iteration which
# functions made the round trips. Benchmarks print numbers; nothing is
# asserted (a worker that fails says so on stderr and its cells stay "-").
# Estimated (not yet run on a GPU): 1-2 minutes of running after the build on
# a 16-core machine; the script prints the seconds spent after each step.
#
#   OUT=/dir tests/gpu/patterns.sh          (from the repository root)
#
# Environment: BUILD (default build-patterns), OUT (default BUILD/patterns-out),
# CUDA_ARCH (nvcc -arch, default native), TRANSPORTS (default shm,unix,tcp),
# ROUNDS (apigen-bench --rounds for the timed runs, default 1),
# RT_SERVER_ARGS (default "--isolation thread", as bench/run-gpu.sh),
# DRV_SERVER_ARGS (default none: apigen-server-cuda's process per session,
# as tests/gpu/driver.sh), BUILDS (default "runtime driver"), NOBUILD=1 (run
# what BUILD holds: no configure, no build).
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 1
build=${BUILD:-build-patterns}
arch=${CUDA_ARCH-native}
case $build in /*) ;; *) build=$root/$build ;; esac
out=${OUT:-$build/patterns-out}
if [ -z "${CUDA_HOME:-}" ]; then
    if command -v nvcc >/dev/null 2>&1; then CUDA_HOME=$(dirname "$(dirname "$(command -v nvcc)")")
    else CUDA_HOME=/usr/local/cuda; fi
fi
export CUDA_HOME PATH="$CUDA_HOME/bin:$PATH"
reallib=$CUDA_HOME/lib64
[ -e "$reallib/libcudart.so.13" ] || reallib=$CUDA_HOME/targets/$(uname -m)-linux/lib
mkdir -p "$build" "$out"
out=$(cd "$out" && pwd)
t0=$(date +%s)
{
    echo "== tests/gpu/patterns.sh, $(date -u '+%Y-%m-%d %H:%M UTC'), $(uname -n), $(nproc) cores, commit $(git rev-parse --short HEAD 2>/dev/null)"
    command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
} | tee "$out/header.txt"
if [ "${NOBUILD:-0}" = 1 ]; then
    echo "== NOBUILD=1: using what $build holds"
else
    echo "== build ($build, arch $arch)"
    cmake -S . -B "$build" -DAPIGEN_BUILD_GENERATOR=OFF -DCMAKE_BUILD_TYPE=Release \
          -DCUDAToolkit_ROOT="$CUDA_HOME" -DAPIGEN_CUDA_ARCH="$arch" > "$out/configure.log" 2>&1 ||
        { tail -n 40 "$out/configure.log"; exit 1; }
    cmake --build "$build" -j"$(nproc)" --target cudart_stub cuda_stub apigen-server-cudart apigen-server-cuda \
          apigen-bench bench_patterns > "$out/build.log" 2>&1 || { tail -n 40 "$out/build.log"; exit 1; }
    echo "   built in $(($(date +%s) - t0)) s"
fi
bench=$build/bench/apigen-bench
args=
for label in ${BUILDS:-runtime driver}; do
    case $label in
    runtime) worker=$build/bench/bench_patterns_rt server=$build/examples/cuda/apigen-server-cudart
             sa=${RT_SERVER_ARGS---isolation thread} ;;
    driver)  worker=$build/bench/bench_patterns_drv server=$build/examples/cuda/apigen-server-cuda
             sa=${DRV_SERVER_ARGS-} ;;
    *) echo "patterns.sh: BUILDS: runtime or driver, not $label"; exit 2 ;;
    esac
    [ -x "$worker" ] && [ -x "$server" ] || { echo "patterns.sh: no $worker or $server built"; exit 1; }
    sargs=
    for a in $sa; do sargs="$sargs --server-arg $a"; done
    echo "== $label stub: timed run ($(basename "$worker"), $(basename "$server") $sa)"
    # shellcheck disable=SC2086 # sargs: split on purpose
    "$bench" --worker "$worker" --server "$server" $sargs --native-dir "$reallib" --stub-dir "$build/stub" \
        --transports "${TRANSPORTS:-shm,unix,tcp}" --rounds "${ROUNDS:-1}" --tsv "$out/$label.tsv" \
        > "$out/$label.bench.txt" 2> "$out/$label.bench.err"
    echo "   exit $?, $(($(date +%s) - t0)) s so far; $(grep -c 'exited with\|did not start\|wrong' "$out/$label.bench.err") failure lines in $label.bench.err"
    echo "== $label stub: traced run (BENCH_PATTERN_COUNT=1)"
    rm -f "$out/$label.trace"
    # shellcheck disable=SC2086
    APIGEN_TRACE=$out/$label.trace BENCH_PATTERN_COUNT=1 \
        "$bench" --worker "$worker" --server "$server" $sargs --native-dir "$reallib" --stub-dir "$build/stub" \
        --transports "${TRANSPORTS:-shm,unix,tcp}" --floors 0 \
        > "$out/$label.count.txt" 2> "$out/$label.count.err"
    rc=$?
    [ -e "$out/$label.trace" ] || : > "$out/$label.trace" # nothing traced: the table says "-"
    echo "   exit $rc, $(($(date +%s) - t0)) s so far; $(grep -c 'apigen pattern mark: begin' "$out/$label.trace") marked runs"
    args="$args $label $out/$label.tsv $out/$label.trace"
done
# shellcheck disable=SC2086 # args: label/file triples, no spaces in OUT
sh "$root/bench/patterns_table.sh" $args > "$out/table.body.txt" || exit 1
cat "$out/header.txt" "$out/table.body.txt" > "$out/table.txt"
rm -f "$out/table.body.txt"
cat "$out/table.txt"
echo "== $(($(date +%s) - t0)) s in all; results in $out (table.txt, LABEL.tsv/.trace/.bench.txt/.bench.err)"
