#!/bin/sh
# tests/gpu/pinned-shm.sh: pinned host-to-device copies (44 B to 64 MiB) natively and through
# both CUDA stubs over shm:// and unix:// (issue 16; the 09:39 patterns table of 2026-11-26 had
# the first copy from new pinned memory at 77-80 ms over the driver stub, fixed by registering
# the arena in segments, and a later 4 MiB copy over shm at 0.21x (runtime stub) / 0.44x
# (driver stub) against 0.85x / 0.67x over unix, not understood). Prints, per build, stub,
# transport and variant, one line per size: the allocation, the first copy, best and median of
# ITERS later ones (tests/gpu/pinned_copy.c, built with gcc: no nvcc). Variants over shm:
# APIGEN_SHM_SPIN_US=0 (sleep at once) and 1000 (spin through a 4 MiB copy), to tell a
# wake-up cost from the rest, and both transports with guest and server under taskset on
# CPUs 2 and 4 (migrations). Then a traced run of each (APIGEN_TRACE, APIGEN_TRACE_TIME=1):
# for the 4 MiB copies, the guest's calls with their wire lines (up= bytes sent: an arena
# reference is ~100 B, bytes through the ring ~4 MiB) and the server's frames, all on one
# clock, so where each microsecond went shows. About a minute after the build.
# TRANSPORTS (default "shm unix"; tcp adds a variant with APIGEN_LANES=0, one
# connection: what the lanes cost and bring on a first copy), STUBS (default
# "rt drv").
#   NOBUILD=1 BUILD=/tmp/bd OUT=/tmp/pin sh tests/gpu/pinned-shm.sh
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 1
B=${BUILD:-/tmp/bd}
OUT=${OUT:-/tmp/pinned-shm}
ITERS=${ITERS:-20}
transports=${TRANSPORTS:-shm unix}
stubs=${STUBS:-rt drv}
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
mkdir -p "$OUT"
if [ "${NOBUILD:-0}" != 1 ]; then
    cmake -S . -B "$B" -DAPIGEN_BUILD_GENERATOR=OFF -DCMAKE_BUILD_TYPE=Release > "$OUT/configure.log" 2>&1 ||
        { tail -20 "$OUT/configure.log"; exit 1; }
    cmake --build "$B" -j"$(nproc)" --target cudart_stub cuda_stub apigen-server-cudart apigen-server-cuda \
        > "$OUT/build.log" 2>&1 || { tail -20 "$OUT/build.log"; exit 1; }
fi
gcc -O2 -o "$OUT/pc_rt" tests/gpu/pinned_copy.c -I"$CUDA_HOME/include" -L"$CUDA_HOME/lib64" -lcudart &&
    gcc -O2 -DDRIVER -o "$OUT/pc_drv" tests/gpu/pinned_copy.c -I"$CUDA_HOME/include" \
        -L"$CUDA_HOME/lib64/stubs" -lcuda || exit 1
real=$CUDA_HOME/lib64
{ echo "== tests/gpu/pinned-shm.sh, $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git rev-parse --short HEAD 2>/dev/null)"
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null; } | tee "$OUT/table.txt"
srv=
stop() { [ -n "$srv" ] && kill "$srv" 2>/dev/null && wait "$srv" 2>/dev/null; srv=; }
trap stop EXIT INT TERM
# run LABEL STUB(rt|drv) TRANSPORT [ENV=VALUE ...]: a fresh server, the program, its lines
# (PIN="GUESTCPU SERVERCPU": each side under taskset on that CPU)
PIN=
runs=0
pin() { # SIDE(0 guest, 1 server) COMMAND...: under taskset when PIN says so
    side=$1
    shift
    if [ -n "$PIN" ]; then
        # shellcheck disable=SC2086
        set -- taskset -c "$(echo $PIN | cut -d' ' -f$((side + 1)))" "$@"
    fi
    exec "$@" # always in a subshell (background, pipeline): kill reaches the program
}
run() {
    label=$1 stub=$2 tr=$3
    shift 3
    case $stub in
    rt) server=$B/examples/cuda/apigen-server-cudart sargs="--isolation thread" prog=$OUT/pc_rt ;;
    drv) server=$B/examples/cuda/apigen-server-cuda sargs= prog=$OUT/pc_drv ;;
    esac
    case $tr in
    native)
        echo "-- $label"
        env "$@" LD_LIBRARY_PATH="$real" timeout 120 "$prog" "$ITERS" 2>&1 | sed 's/^/   /'
        return ;;
    shm) url="shm://apigen-pinned-$$-$label" ;;
    unix) rm -f "$OUT/s.sock"; url="unix://$OUT/s.sock" ;;
    tcp) runs=$((runs + 1)); url="tcp://127.0.0.1:$((20000 + ($$ * 7 + runs) % 20000))" ;;
    esac
    # shellcheck disable=SC2086
    pin 1 env "$@" "$server" --listen "$url" $sargs > "$OUT/$label.server.log" 2>&1 &
    srv=$!
    i=0
    while [ $i -lt 200 ] && ! grep -q listening "$OUT/$label.server.log" 2>/dev/null; do sleep 0.05; i=$((i + 1)); done
    echo "-- $label"
    pin 0 env "$@" APIGEN_SERVER="$url" LD_LIBRARY_PATH="$B/stub" timeout 120 "$prog" "$ITERS" 2>&1 |
        sed 's/^/   /'
    stop
}
{
    run native-runtime rt native
    run native-driver drv native
    for stub in $stubs; do
        for tr in $transports; do
            run "$stub-$tr" $stub $tr
            case $tr in
            shm)
                run "$stub-shm-spin0" $stub shm APIGEN_SHM_SPIN_US=0 APIGEN_SPIN_MAX_US=0
                run "$stub-shm-spin1000" $stub shm APIGEN_SHM_SPIN_US=1000 ;;
            tcp) run "$stub-tcp-lanes0" $stub tcp APIGEN_LANES=0 ;;
            esac
            PIN="2 4"
            run "$stub-$tr-cpus2:4" $stub $tr
            PIN=
        done
    done
} 2>&1 | tee -a "$OUT/table.txt"
echo "== traced (ITERS=5): the 4 MiB copies, guest and server lines on one clock" | tee -a "$OUT/table.txt"
ITERS=5
for stub in $stubs; do
    for tr in $transports; do
        rm -f "$OUT/$stub-$tr.trace"
        run "$stub-$tr-traced" $stub $tr APIGEN_TRACE="$OUT/$stub-$tr.trace" APIGEN_TRACE_TIME=1 > /dev/null
        echo "-- $stub $tr: lines from the first 4 MiB copy on (50 lines; all in $OUT/$stub-$tr.trace)"
        grep -n 'count=4194304\|ByteCount=4194304' "$OUT/$stub-$tr.trace" | head -1 | cut -d: -f1 |
            { read -r at && sed -n "$((at > 5 ? at - 5 : 1)),$((at + 45))p" "$OUT/$stub-$tr.trace"; }
    done
done 2>&1 | tee -a "$OUT/table.txt"
echo "== results in $OUT (table.txt, *.trace, *.server.log)"
