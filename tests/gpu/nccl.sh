#!/bin/sh
# tests/gpu/nccl.sh: on a machine with NVIDIA GPUs (two or more for a real
# exchange), NCCL forwarded as a library: examples/nccl/collectives (one
# process per rank, every collective and point to point call; then one
# process driving every GPU: --all) natively and
# through apigen's libnccl.so.2 and libcudart.so.13 to one
# apigen-server-cuda-family over unix, tcp and shm; stdout must be the same
# (CI runs it over stand-ins: nccl.fake.*).
#   BUILD=/tmp/bd tests/gpu/nccl.sh   (RANKS: default the GPU count)
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD:-$root/build}
export NCCL_NVLS_ENABLE=0 # never NVLink multicast (the GPU machines' rule)
ranks=${RANKS:-$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')}
[ "$ranks" -ge 1 ] 2>/dev/null || ranks=1
prog=$build/examples/nccl/collectives
# the native run uses the NCCL the server links (the build's), not another on
# the machine's library path
nccl_dir=$(dirname "$(sed -n 's/^APIGEN_NCCL_LIBRARY:FILEPATH=//p' "$build/CMakeCache.txt")")
work=$(mktemp -d /tmp/apigen-nccl.XXXXXX)
port=$(( 30000 + ($$ % 20000) ))
"$build/examples/cuda/apigen-server-cuda-family" --listen "unix://$work/s.sock" --listen "tcp://127.0.0.1:$port" \
    --listen "shm://apigen-nccl-$$" > "$work/server.log" 2>&1 &
spid=$!
i=0; while [ ! -S "$work/s.sock" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
sleep 0.5
t0=$(date +%s.%N)
LD_LIBRARY_PATH="$nccl_dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" timeout 120 "$prog" "$ranks" > "$work/native" 2> "$work/native.err"
nrc=$?
echo "native: $ranks ranks, exit $nrc, $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }') s"
rc=0
for t in unix tcp shm; do
    case $t in unix) url="unix://$work/s.sock" ;; tcp) url="tcp://127.0.0.1:$port" ;; shm) url="shm://apigen-nccl-$$" ;; esac
    t0=$(date +%s.%N)
    APIGEN_SERVER=$url LD_LIBRARY_PATH="$build/stub" timeout 120 "$prog" "$ranks" > "$work/$t" 2> "$work/$t.err"
    frc=$?
    s=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
    if [ "$frc" = "$nrc" ] && cmp -s "$work/native" "$work/$t"; then echo "nccl $t: identical ($s s)"; else
        echo "nccl $t: DIFFERS (exit $frc, $s s)"; diff "$work/native" "$work/$t" | head -20; head -8 "$work/$t.err"; rc=1; fi
done
# one process driving every GPU (ncclCommInitAll)
LD_LIBRARY_PATH="$nccl_dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" timeout 120 "$prog" --all "$ranks" > "$work/all.native" 2> "$work/all.native.err"
for t in unix tcp shm; do
    case $t in unix) url="unix://$work/s.sock" ;; tcp) url="tcp://127.0.0.1:$port" ;; shm) url="shm://apigen-nccl-$$" ;; esac
    APIGEN_SERVER=$url LD_LIBRARY_PATH="$build/stub" timeout 120 "$prog" --all "$ranks" > "$work/all.$t" 2> "$work/all.$t.err"
    if cmp -s "$work/all.native" "$work/all.$t"; then echo "nccl --all $t: identical"; else
        echo "nccl --all $t: DIFFERS"; diff "$work/all.native" "$work/all.$t" | head -10; rc=1; fi
done
cat "$work/native" "$work/all.native"
kill $spid 2>/dev/null; wait $spid 2>/dev/null
grep -v "listening\|shutting down" "$work/server.log" | head -8
rm -rf "$work"
exit $rc
