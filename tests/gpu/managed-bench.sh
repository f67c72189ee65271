#!/bin/sh
# tests/gpu/managed-bench.sh: the cost of managed memory (docs/managed.md).
# Builds the cudart stub, its server and tests/gpu/managed_bench.cu (nvcc
# -cudart shared), runs it natively and through the stub over unix, tcp and
# shm, checks that every run prints the same checksums, and prints each
# run's timings (no-prefetch, prefetch, host-writes, small-state, launches).
#
#   tests/gpu/managed-bench.sh [MiB (64)] [ROUNDS (20)]     (from the repository root)
# Environment: BUILD (default build-gpu), CUDA_ARCH (default native), KEEP=1.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 1
mib=${1:-64} rounds=${2:-20}
build=${BUILD:-build-gpu}
arch=${CUDA_ARCH-native}
if [ -z "${CUDA_HOME:-}" ]; then
    if command -v nvcc >/dev/null 2>&1; then CUDA_HOME=$(dirname "$(dirname "$(command -v nvcc)")")
    else CUDA_HOME=/usr/local/cuda; fi
fi
export PATH="$CUDA_HOME/bin:$PATH"
reallib=$CUDA_HOME/lib64
[ -e "$reallib/libcudart.so.13" ] || reallib=$CUDA_HOME/targets/$(uname -m)-linux/lib
command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L
case $build in /*) ;; *) build=$root/$build ;; esac
mkdir -p "$build"
cmake -S . -B "$build" -DAPIGEN_BUILD_GENERATOR=OFF -DCMAKE_BUILD_TYPE=Release \
      -DCUDAToolkit_ROOT="$CUDA_HOME" -DAPIGEN_CUDA_ARCH="$arch" > "$build/managed-bench.configure.log" 2>&1 ||
    { cat "$build/managed-bench.configure.log"; exit 1; }
cmake --build "$build" -j"$(nproc)" --target cudart_stub apigen-server-cudart > "$build/managed-bench.build.log" 2>&1 ||
    { tail -n 50 "$build/managed-bench.build.log"; exit 1; }
stub=$build/stub
server=$build/examples/cuda/apigen-server-cudart
prog=$build/managed_bench
nvcc -cudart shared -std=c++17 -O2 -arch="$arch" -o "$prog" tests/gpu/managed_bench.cu || exit 1

logs=$(mktemp -d "${TMPDIR:-/tmp}/apigen-mbench.XXXXXX")
port=$(( 30000 + ($$ % 20000) ))
shmname=apigen-mbench-$$
"$server" --listen "unix://$logs/s.sock" --listen "tcp://127.0.0.1:$port" --listen "shm://$shmname" > "$logs/server.log" 2>&1 &
spid=$!
cleanup() { kill "$spid" 2>/dev/null; wait "$spid" 2>/dev/null; [ "${KEEP:-0}" = 1 ] && echo "logs: $logs" || rm -rf "$logs"; }
trap cleanup EXIT INT TERM
i=0
while [ $i -lt 100 ] && [ "$(grep -c listening "$logs/server.log" 2>/dev/null)" -lt 3 ]; do sleep 0.05; i=$((i + 1)); done

fails=0
for m in native unix tcp shm; do
    case $m in
    native) LD_LIBRARY_PATH="$reallib" "$prog" "$mib" "$rounds" > "$logs/$m.out" 2> "$logs/$m.err" ;;
    unix) APIGEN_SERVER="unix://$logs/s.sock" LD_LIBRARY_PATH="$stub" "$prog" "$mib" "$rounds" > "$logs/$m.out" 2> "$logs/$m.err" ;;
    tcp) APIGEN_SERVER="tcp://127.0.0.1:$port" LD_LIBRARY_PATH="$stub" "$prog" "$mib" "$rounds" > "$logs/$m.out" 2> "$logs/$m.err" ;;
    shm) APIGEN_SERVER="shm://$shmname" LD_LIBRARY_PATH="$stub" "$prog" "$mib" "$rounds" > "$logs/$m.out" 2> "$logs/$m.err" ;;
    esac
    rc=$?
    echo "== $m (exit $rc)"
    sed 's/^/  /' "$logs/$m.err"
    if [ $m != native ] && ! cmp -s "$logs/native.out" "$logs/$m.out"; then
        echo "  checksums DIFFER from native:"; diff "$logs/native.out" "$logs/$m.out" | sed 's/^/    /'
        fails=$((fails + 1))
    fi
    [ $rc = 0 ] || fails=$((fails + 1))
done
[ -n "${OUT:-}" ] && { mkdir -p "$OUT/managed-bench"; cp "$logs"/*.out "$logs"/*.err "$OUT/managed-bench/"; }
[ $fails = 0 ] && echo "managed-bench: checksums identical natively and over unix, tcp, shm" || echo "managed-bench: $fails FAILED"
exit $fails
