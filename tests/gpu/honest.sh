#!/bin/sh
# tests/gpu/honest.sh: on a machine with an NVIDIA GPU and the CUDA 13
# toolkit, run examples/cuda/honest (the error each call gets, issue 13)
# natively and forwarded over unix, tcp and shm, and compare stdout. The
# forwarded output must equal the native one except for the documented
# differences below, which are applied to the native transcript first (so a
# difference that is not documented, or a documented one that does not
# happen, fails):
#   - cudaHostAllocWriteCombined: cudaErrorNotSupported forwarded (the stub
#     cannot honour it; cudaHostRegisterMapped is honoured by copies:
#     docs/multi-gpu.md)
#   - tcp (no shared-memory arena): cudaMallocHost memory is the guest's own,
#     with no device pointer until a kernel reaches it (a twin) or
#     cudaHostGetDevicePointer asks: a pointer query answers "none", so no
#     kernel writes through it
#
#   tests/gpu/honest.sh            (from the repository root; BUILD, CUDA_ARCH,
#                                   CUDA_HOME and KEEP as for run-all.sh)
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 1
build=${BUILD:-build-gpu}
arch=${CUDA_ARCH-native}
if [ -z "${CUDA_HOME:-}" ]; then
    if command -v nvcc >/dev/null 2>&1; then CUDA_HOME=$(dirname "$(dirname "$(command -v nvcc)")")
    else CUDA_HOME=/usr/local/cuda; fi
fi
export CUDA_HOME PATH="$CUDA_HOME/bin:$PATH"
[ -x "$CUDA_HOME/bin/nvcc" ] || { echo "honest: no nvcc under CUDA_HOME=$CUDA_HOME"; exit 1; }
reallib=$CUDA_HOME/lib64
[ -e "$reallib/libcudart.so.13" ] || reallib=$CUDA_HOME/targets/$(uname -m)-linux/lib
case $build in /*) ;; *) build=$root/$build ;; esac
mkdir -p "$build"
echo "== build ($build)"
cmake -S . -B "$build" -DAPIGEN_BUILD_GENERATOR=OFF -DCMAKE_BUILD_TYPE=Release \
      -DCUDAToolkit_ROOT="$CUDA_HOME" -DAPIGEN_CUDA_ARCH="$arch" > "$build/honest.configure.log" 2>&1 ||
    { cat "$build/honest.configure.log"; exit 1; }
cmake --build "$build" -j"$(nproc)" --target cudart_stub apigen-server-cudart cuda_examples \
    > "$build/honest.build.log" 2>&1 || { tail -n 50 "$build/honest.build.log"; exit 1; }
stub=$build/stub
server=$build/examples/cuda/apigen-server-cudart
prog=$build/examples/cuda/honest
[ -x "$prog" ] && [ -x "$server" ] || { echo "honest: the build made no $prog or $server"; exit 1; }

logs=$(mktemp -d "${TMPDIR:-/tmp}/apigen-honest.XXXXXX")
port=$(( 30000 + ($$ % 20000) ))
shmname=apigen-honest-$$
"$server" --listen "unix://$logs/cudart.sock" --listen "tcp://127.0.0.1:$port" \
    --listen "shm://$shmname" > "$logs/server.log" 2>&1 &
spid=$!
cleanup() { kill "$spid" 2>/dev/null; wait "$spid" 2>/dev/null; [ "${KEEP:-0}" = 1 ] && echo "logs: $logs" || rm -rf "$logs"; }
trap cleanup EXIT INT TERM
i=0
while [ $i -lt 100 ] && [ "$(grep -c listening "$logs/server.log" 2>/dev/null)" -lt 3 ]; do sleep 0.05; i=$((i + 1)); done

LD_LIBRARY_PATH="$reallib" timeout 120 "$prog" > "$logs/native.out" 2> "$logs/native.err"
echo $? > "$logs/native.rc"
for m in unix tcp shm; do
    case $m in
    unix) url="unix://$logs/cudart.sock" ;;
    tcp) url="tcp://127.0.0.1:$port" ;;
    shm) url="shm://$shmname" ;;
    esac
    APIGEN_SERVER=$url LD_LIBRARY_PATH="$stub" timeout 120 "$prog" > "$logs/$m.out" 2> "$logs/$m.err"
    echo $? > "$logs/$m.rc"
done

# the native transcript with the documented differences applied
documented() { # MODE < native > expected
    sed -e 's/^\(cudaHostAlloc(cudaHostAllocWriteCombined)\): .*/\1: cudaErrorNotSupported/' |
    if [ "$1" = tcp ]; then
        sed -e 's/^\(cudaMallocHost memory: .*\), device pointer .*/\1, device pointer none/' \
            -e '/^  a kernel wrote through it: /d'
    else cat; fi
}

fails=0
echo "== native (exit $(cat "$logs/native.rc"))"
sed 's/^/   /' "$logs/native.out"
[ "$(cat "$logs/native.rc")" = 0 ] || { echo "honest: the native run failed:"; cat "$logs/native.err"; fails=$((fails + 1)); }
for m in unix tcp shm; do
    documented "$m" < "$logs/native.out" > "$logs/$m.want"
    if [ "$(cat "$logs/$m.rc")" != "$(cat "$logs/native.rc")" ] || ! cmp -s "$logs/$m.want" "$logs/$m.out"; then
        echo "== $m: DIFFERS from native (documented differences applied), exit $(cat "$logs/$m.rc")"
        diff -u "$logs/$m.want" "$logs/$m.out" | sed 's/^/   /'
        echo "== $m stderr"; sed 's/^/   /' "$logs/$m.err"
        fails=$((fails + 1))
    else
        echo "== $m: as native, documented differences aside"
    fi
done
crashed=$(grep -c "was killed by signal" "$logs/server.log")
[ "$crashed" = 0 ] || { echo "honest: $crashed session process(es) crashed:"; tail -n 30 "$logs/server.log"; fails=$((fails + crashed)); }
[ $fails = 0 ] && echo "honest: every transport answered as natively" || echo "honest: $fails failure(s)"
[ $fails = 0 ]
