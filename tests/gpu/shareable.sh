#!/bin/sh
# tests/gpu/shareable.sh: on a machine with an NVIDIA GPU, memory shared
# between two processes by a POSIX file descriptor
# (cuMemExportToShareableHandle / cuMemImportFromShareableHandle, as
# NVIDIA's memMapIPCDrv sample does): tests/cuda/driver/shareable_ci.c
# natively and through the driver stub over unix, tcp and shm; stdout must
# be the same, stderr apart (CI runs it over the stand-in driver: cuda.driver.shareable_ci).
#   BUILD=/tmp/bd tests/gpu/shareable.sh   (after building cuda_stub and
#   apigen-server-cuda; CUDA_HOME)
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD:-$root/build}
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
work=$(mktemp -d /tmp/apigen-shareable.XXXXXX)
gcc -std=c11 -O1 -Wall -I"$CUDA_HOME/include" -o "$work/prog" "$root/tests/cuda/driver/shareable_ci.c" \
    -L"$CUDA_HOME/lib64/stubs" -lcuda || { echo "shareable.sh: build failed"; exit 2; }
port=$(( 30000 + ($$ % 20000) ))
"$build/examples/cuda/apigen-server-cuda" --listen "unix://$work/s.sock" --listen "tcp://127.0.0.1:$port" \
    > "$work/server.log" 2>&1 &
spid=$!
"$build/examples/cuda/apigen-server-cuda" --isolation thread --listen "shm://apigen-shareable-$$" \
    > "$work/server-shm.log" 2>&1 &
spid2=$!
i=0; while [ ! -S "$work/s.sock" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
sleep 0.5
timeout 60 "$work/prog" > "$work/native" 2> "$work/native.err"
rc=0
for t in unix tcp shm; do
    case $t in unix) url="unix://$work/s.sock" ;; tcp) url="tcp://127.0.0.1:$port" ;; shm) url="shm://apigen-shareable-$$" ;; esac
    APIGEN_SERVER=$url LD_LIBRARY_PATH="$build/stub-driver" timeout 60 "$work/prog" > "$work/$t" 2> "$work/$t.err"
    if cmp -s "$work/native" "$work/$t"; then echo "shareable $t: identical"; else
        echo "shareable $t: DIFFERS"; diff "$work/native" "$work/$t" | head -12; head -5 "$work/$t.err"; rc=1; fi
done
tail -4 "$work/native"
kill $spid $spid2 2>/dev/null; wait $spid $spid2 2>/dev/null
cat "$work/server.log" "$work/server-shm.log" | grep -v listening | head -5
rm -rf "$work"
exit $rc
