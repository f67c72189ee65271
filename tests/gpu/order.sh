#!/bin/sh
# tests/gpu/order.sh: the cross-thread ordering tests of CI (cuda.order_ci.*,
# cuda.driver.order_ci.*: thread A queues work on a stream, tells thread B
# with no CUDA call in between, B queues dependent work on the same stream
# and reads back) on a real GPU: tests/cuda/order_ci.sh with no stand-in,
# the runtime program (tests/cuda/order_rt.cu) and the driver program
# (tests/cuda/driver/order_ci.c, its module the PTX of order_rt.cu's
# kernels), natively and through the stubs over unix, tcp and shm (timer
# flush on and off). Every round must give the sequential result and the
# forwarded output must equal the native one.
#
#   BUILD=/tmp/bd sh tests/gpu/order.sh   (from the repository root; CUDA_HOME,
#                                          CUDA_ARCH as for lasterr.sh)
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 1
build=${BUILD:-build-gpu}
arch=${CUDA_ARCH-native}
case $arch in [0-9]*) arch=sm_$arch ;; esac # nvcc -arch: sm_90 (90 accepted), native
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
export PATH="$CUDA_HOME/bin:$PATH"
case $build in /*) ;; *) build=$root/$build ;; esac
mkdir -p "$build"
targets="cudart_stub apigen-server-cudart cuda_stub apigen-server-cuda cuda_driver_order_ci"
cmake -S . -B "$build" -DAPIGEN_BUILD_GENERATOR=OFF -DCMAKE_BUILD_TYPE=Release \
      -DCUDAToolkit_ROOT="$CUDA_HOME" -DAPIGEN_CUDA_ARCH="$arch" > "$build/order.configure.log" 2>&1 ||
    { cat "$build/order.configure.log"; exit 1; }
# shellcheck disable=SC2086 # the targets split on purpose
cmake --build "$build" -j"$(nproc)" --target $targets > "$build/order.build.log" 2>&1 ||
    { tail -n 50 "$build/order.build.log"; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/apigen-order.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
gencode=
[ -n "$arch" ] && gencode="-arch=$arch"
# shellcheck disable=SC2086
nvcc $gencode -cudart shared -o "$tmp/order_rt" tests/cuda/order_rt.cu || exit 1
nvcc -ptx -o "$tmp/order.ptx" tests/cuda/order_rt.cu || exit 1
rc=0
for tr in unix tcp shm; do
    sh tests/cuda/order_ci.sh "$build/examples/cuda/apigen-server-cudart" "$build/stub" "$CUDA_HOME/lib64" "" \
        "$tmp/order_rt" "$tr" || rc=1
    ORDER_CI_IMAGE="$tmp/order.ptx" sh tests/cuda/order_ci.sh "$build/examples/cuda/apigen-server-cuda" \
        "$build/stub" "$CUDA_HOME/lib64" "" "$build/tests/cuda/cuda_driver_order_ci" "$tr" || rc=1
done
[ $rc = 0 ] && echo "PASS: order_rt and driver order_ci on the GPU, natively and over unix, tcp, shm"
exit $rc
