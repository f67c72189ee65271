#!/bin/sh
# tests/gpu/pool-ipc.sh: on a machine with an NVIDIA GPU, stream-ordered
# allocations shared between two processes (tests/gpu/pool_ipc.cu, the
# pattern of NVIDIA's streamOrderedAllocationIPC) natively and forwarded
# over unix, tcp and shm: built with -cudart shared (apigen's runtime stub)
# and with the static runtime (apigen's driver stub); stdout must be the
# same (CI runs the pool's export and import over the stand-in device:
# cuda.pool_shareable_rt, cuda.driver.shareable_ci).
#   BUILD=/tmp/bd tests/gpu/pool-ipc.sh   (after a build with the family server)
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD:-$root/build}
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
work=$(mktemp -d /tmp/apigen-poolipc.XXXXXX)
"$CUDA_HOME/bin/nvcc" -O2 -cudart shared -o "$work/shared" "$root/tests/gpu/pool_ipc.cu" &&
    "$CUDA_HOME/bin/nvcc" -O2 -o "$work/static" "$root/tests/gpu/pool_ipc.cu" || { echo "pool-ipc: build failed"; exit 2; }
port=$(( 30000 + ($$ % 20000) ))
"$build/examples/cuda/apigen-server-cuda-family" --listen "unix://$work/s.sock" --listen "tcp://127.0.0.1:$port" \
    --listen "shm://apigen-poolipc-$$" > "$work/server.log" 2>&1 &
spid=$!
i=0; while [ ! -S "$work/s.sock" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
sleep 0.5
rc=0
for b in shared static; do
    timeout 60 "$work/$b" > "$work/$b.native" 2> "$work/$b.native.err"
    nrc=$?
    case $b in shared) stub=$build/stub ;; static) stub=$build/stub-driver ;; esac
    for t in unix tcp shm; do
        case $t in unix) url="unix://$work/s.sock" ;; tcp) url="tcp://127.0.0.1:$port" ;; shm) url="shm://apigen-poolipc-$$" ;; esac
        APIGEN_SERVER=$url LD_LIBRARY_PATH="$stub" timeout 60 "$work/$b" > "$work/$b.$t" 2> "$work/$b.$t.err"
        frc=$?
        if [ "$frc" = "$nrc" ] && cmp -s "$work/$b.native" "$work/$b.$t"; then echo "pool-ipc $b $t: identical (exit $frc)"; else
            echo "pool-ipc $b $t: DIFFERS (exit $frc, native $nrc)"; diff "$work/$b.native" "$work/$b.$t" | head -12
            grep -v "^guest" "$work/$b.$t.err" | head -6; rc=1; fi
    done
done
cat "$work/shared.native"
kill $spid 2>/dev/null; wait $spid 2>/dev/null
grep -v "listening\|shutting down" "$work/server.log" | head -8
rm -rf "$work"
exit $rc
