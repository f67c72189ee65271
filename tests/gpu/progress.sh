#!/bin/sh
# tests/gpu/progress.sh: on a machine with an NVIDIA GPU and the CUDA 13
# toolkit, the progress lines of runtime/progress.c on the cudart path (issue
# 19, item 5): examples/cuda/vector_add forwarded over unix with
# APIGEN_PROGRESS=1 and a small APIGEN_PROGRESS_MIN must print the same stdout
# as natively and at least one "apigen[guest PID vector_add]: sending: ..."
# line (its fat binary's registration and its copies are such sends); with
# APIGEN_PROGRESS=0, not one.
#
#   tests/gpu/progress.sh          (from the repository root; BUILD, CUDA_ARCH,
#                                   CUDA_HOME as for run-all.sh)
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
[ -x "$CUDA_HOME/bin/nvcc" ] || { echo "progress: no nvcc under CUDA_HOME=$CUDA_HOME"; exit 1; }
reallib=$CUDA_HOME/lib64
[ -e "$reallib/libcudart.so.13" ] || reallib=$CUDA_HOME/targets/$(uname -m)-linux/lib
case $build in /*) ;; *) build=$root/$build ;; esac
mkdir -p "$build"
echo "== build ($build)"
cmake -S . -B "$build" -DAPIGEN_BUILD_GENERATOR=OFF -DCMAKE_BUILD_TYPE=Release \
      -DCUDAToolkit_ROOT="$CUDA_HOME" -DAPIGEN_CUDA_ARCH="$arch" > "$build/progress.configure.log" 2>&1 ||
    { cat "$build/progress.configure.log"; exit 1; }
cmake --build "$build" -j"$(nproc)" --target cudart_stub apigen-server-cudart cuda_examples \
    > "$build/progress.build.log" 2>&1 || { tail -n 50 "$build/progress.build.log"; exit 1; }
tmp=$(mktemp -d)
server_pid=
trap '[ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null; rm -rf "$tmp"' EXIT
prog=$build/examples/cuda/vector_add
LD_LIBRARY_PATH=$reallib "$prog" > "$tmp/native.out" 2>&1
"$build/examples/cuda/apigen-server-cudart" --listen "unix://$tmp/s.sock" 2> "$tmp/server.log" &
server_pid=$!
i=0; while [ ! -S "$tmp/s.sock" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
status=0
APIGEN_PROGRESS=1 APIGEN_PROGRESS_MIN=4096 APIGEN_SERVER="unix://$tmp/s.sock" LD_LIBRARY_PATH=$build/stub \
    "$prog" > "$tmp/on.out" 2> "$tmp/on.err"
diff "$tmp/native.out" "$tmp/on.out" > /dev/null || { echo "FAIL: stdout differs with APIGEN_PROGRESS=1"; status=1; }
grep -q '^apigen\[guest [0-9]* vector_add\]: sending: ' "$tmp/on.err" ||
    { echo "FAIL: no progress line with APIGEN_PROGRESS=1:"; cat "$tmp/on.err"; status=1; }
APIGEN_PROGRESS=0 APIGEN_PROGRESS_MIN=4096 APIGEN_SERVER="unix://$tmp/s.sock" LD_LIBRARY_PATH=$build/stub \
    "$prog" > "$tmp/off.out" 2> "$tmp/off.err"
diff "$tmp/native.out" "$tmp/off.out" > /dev/null || { echo "FAIL: stdout differs with APIGEN_PROGRESS=0"; status=1; }
grep -q 'sending: ' "$tmp/off.err" && { echo "FAIL: progress lines with APIGEN_PROGRESS=0"; status=1; }
echo "-- progress lines with APIGEN_PROGRESS=1:"
grep 'sending: \|copying: ' "$tmp/on.err" | head -n 10
[ $status = 0 ] && echo "progress: on and off over cudart, the same stdout as natively"
exit $status
