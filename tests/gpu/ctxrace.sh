#!/bin/sh
# tests/gpu/ctxrace.sh: examples/cuda/pageable_copy with a diagnosis of wrong bytes
# (its DIAG lines, printed only for wrong bytes; plain nvcc: NVIDIA's static runtime over
# apigen's libcuda.so.1) natively, then REPS times forwarded over shm and
# unix with the guest's answers on (APIGEN_CACHE default) and off
# (APIGEN_CACHE=0). For each run that differs: what the host got and what
# the device holds (a registered receive buffer overwritten by the next
# frame showed as the first 49 bytes wrong on the device). Logs to $OUT.
#   BUILD=/tmp/bd REPS=6 sh tests/gpu/ctxrace.sh
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 1
build=${BUILD:-/tmp/bd}
export PATH=/usr/local/cuda/bin:$PATH
out=${OUT:-/tmp/ctxrace-out}
mkdir -p "$build" "$out"
cmake -S . -B "$build" -DAPIGEN_BUILD_GENERATOR=OFF -DCMAKE_BUILD_TYPE=Release -DAPIGEN_CUDA_ARCH=sm_90 \
    > "$build/cfg.log" 2>&1 || { tail -20 "$build/cfg.log"; exit 1; }
cmake --build "$build" -j"$(nproc)" --target cuda_stub apigen-server-cuda > "$build/b.log" 2>&1 ||
    { tail -30 "$build/b.log"; exit 1; }
only=$build/driver-only
mkdir -p "$only"
ln -sf "$build/stub/libcuda.so.1" "$only/libcuda.so.1"
server=$build/examples/cuda/apigen-server-cuda
logs=$(mktemp -d)
"$server" --listen "unix://$logs/s.sock" > "$out/server-unix.log" 2>&1 &
p1=$!
"$server" --listen "shm://ctxrace$$" > "$out/server-shm.log" 2>&1 &
p2=$!
trap 'kill $p1 $p2 2>/dev/null' EXIT
sleep 1
nvcc -std=c++17 -O2 -arch=sm_90 -I examples/cuda -o "$build/pc_diag" examples/cuda/pageable_copy.cu || exit 1
reps=${REPS:-6}
"$build/pc_diag" > "$out/native.txt" 2>/dev/null; echo "native rc=$?"
for t in shm unix; do
    url=shm://ctxrace$$; [ $t = unix ] && url=unix://$logs/s.sock
    for cache in 1 0; do
        r=0; nbad=0
        while [ $r -lt "$reps" ]; do
            APIGEN_SERVER=$url APIGEN_CACHE=$cache LD_LIBRARY_PATH=$only timeout 300 "$build/pc_diag" \
                > "$out/pc.$t.$cache.$r.txt" 2>/dev/null
            rc=$?
            if cmp -s "$out/pc.$t.$cache.$r.txt" "$out/native.txt"; then rm "$out/pc.$t.$cache.$r.txt"
            else nbad=$((nbad + 1)); echo "$t cache=$cache run $r rc=$rc:"; grep DIAG "$out/pc.$t.$cache.$r.txt"; fi
            r=$((r + 1))
        done
        echo "$t cache=$cache: $nbad of $reps differ"
    done
done
cat "$out"/pc.*.txt > "$out/differ.txt" 2>/dev/null; rm -f "$out"/pc.*.txt
exit 0
