#!/bin/sh
# tests/gpu/libkernel.sh: on a machine with an NVIDIA GPU, library kernels
# launched by their handles through the runtime API (tests/gpu/libkernel/):
# natively (-cudart shared) and through apigen's runtime stub over unix and
# tcp; stdout must be the same.
#   BUILD=/tmp/bd tests/gpu/libkernel.sh   (after building cudart_stub and
#   apigen-server-cudart; CUDA_HOME, CUDA_ARCH (default sm_90))
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD:-$root/build}
arch=${CUDA_ARCH:-sm_90}
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
work=$(mktemp -d /tmp/apigen-libkernel.XXXXXX)
"$CUDA_HOME/bin/nvcc" -arch="$arch" -ptx -o "$work/k.ptx" "$root/tests/gpu/libkernel/kernels.cu" &&
    "$CUDA_HOME/bin/nvcc" -arch="$arch" -cudart shared -o "$work/main" "$root/tests/gpu/libkernel/main.cu" ||
    { echo "libkernel.sh: nvcc failed"; exit 2; }
port=$(( 30000 + ($$ % 20000) ))
"$build/examples/cuda/apigen-server-cudart" --listen "unix://$work/s.sock" --listen "tcp://127.0.0.1:$port" \
    > "$work/server.log" 2>&1 &
spid=$!
i=0; while [ ! -S "$work/s.sock" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
LD_LIBRARY_PATH="$CUDA_HOME/lib64" timeout 60 "$work/main" "$work/k.ptx" > "$work/native" 2>&1
rc=0
for t in unix tcp; do
    url="unix://$work/s.sock"; [ $t = tcp ] && url="tcp://127.0.0.1:$port"
    APIGEN_SERVER=$url LD_LIBRARY_PATH="$build/stub" timeout 60 "$work/main" "$work/k.ptx" > "$work/$t" 2>&1
    if cmp -s "$work/native" "$work/$t"; then echo "libkernel $t: identical"; else
        echo "libkernel $t: DIFFERS"; diff "$work/native" "$work/$t" | head -10; rc=1; fi
done
tail -3 "$work/native"
kill $spid 2>/dev/null; wait $spid 2>/dev/null
rm -rf "$work"
exit $rc
