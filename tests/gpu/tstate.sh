#!/bin/sh
# tests/gpu/tstate.sh: tests/cuda/tstate_ci.c on the real GPU, runtime and
# driver (the CI test runs it over stand-ins): natively, then through the
# runtime's, the driver's and cuBLAS's stubs to one apigen-server-cuda-family
# with kept answers and with APIGEN_CACHE=0; stdout compared (each answer
# of cudaGetDevice, cuCtxGetCurrent and cuDevicePrimaryCtxGetState across
# device and context switches through each API, lazy initialization on
# fresh threads, flag changes, releases and resets), and the round trips of
# the PyTorch-like loop per call. Checks NVIDIA's own semantics against
# what specs/cuda.yaml and specs/cudart.yaml assume (api.thread_state_effects,
# api.thread_state_lazy, the primary_context cache group). One GPU is
# enough (device 1's lines then say what the driver answers for a missing
# device, natively and forwarded alike).
#   BUILD=/tmp/bd OUT=/dir sh tests/gpu/tstate.sh   (after building
#   apigen-server-cuda-family, the stubs and cuda_tstate_ci into $BUILD)
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD:-$root/build}
OUT=${OUT:-$root/tstate-out}
iters=${ITERS:-100}
prog=$build/tests/cuda/cuda_tstate_ci
server=$build/examples/cuda/apigen-server-cuda-family
for f in "$prog" "$server"; do [ -x "$f" ] || { echo "tstate.sh: no $f"; exit 2; }; done
mkdir -p "$OUT"
tmp=$(mktemp -d /tmp/apigen-tstate.XXXXXX)
"$server" --listen "unix://$tmp/s.sock" > "$OUT/server.log" 2>&1 &
spid=$!
trap 'kill $spid 2>/dev/null; wait $spid 2>/dev/null; rm -rf "$tmp"' EXIT INT TERM
i=0; while [ ! -S "$tmp/s.sock" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
timeout 120 "$prog" "$iters" > "$OUT/native.out" 2> "$OUT/native.err"
echo "native: exit $?"
rc=0
for run in kept nocache; do
    c=1
    [ $run = nocache ] && c=0
    APIGEN_CACHE=$c APIGEN_TRACE="$OUT/$run.trace" APIGEN_SERVER="unix://$tmp/s.sock" \
        LD_LIBRARY_PATH="$build/stub" timeout 120 "$prog" "$iters" > "$OUT/$run.out" 2> "$OUT/$run.err"
    echo "forwarded ($run): exit $?"
    if cmp -s "$OUT/native.out" "$OUT/$run.out"; then
        echo "forwarded ($run): identical to native ($(wc -l < "$OUT/native.out") lines)"
    else
        echo "FAIL: forwarded ($run) differs from native:"
        diff -u "$OUT/native.out" "$OUT/$run.out"
        rc=1
    fi
done
for fn in cudaGetDevice cuDevicePrimaryCtxGetState cuCtxGetCurrent cublasGetMathMode cudaGetLastError; do
    for run in nocache kept; do
        n=$(awk -v f="$fn(" '/cudaMemGetInfo\(/ { phase++; next }
            phase == 4 && index($0, ": " f) && !/\[cached/ { n++ } END { print n + 0 }' "$OUT/$run.trace")
        printf '%s %s=%s' "$fn" "$run" "$n"
        printf ' '
    done
    echo "(round trips in $iters rounds of the loop)"
done
exit $rc
