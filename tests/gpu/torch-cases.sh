#!/bin/sh
# tests/gpu/torch-cases.sh: the PyTorch cases of tests/gpu/torch/ natively
# and over apigen's driver stub (NVIDIA's runtime, cuBLAS, cuDNN and
# PyTorch's kernels run in the guest; every driver call is forwarded), on
# each transport; stdout compared (values bitwise), one table.
#
#   BUILD=/tmp/b OUT=/dir tests/gpu/torch-cases.sh   (after building cuda_stub
#   and apigen-server-cuda into $BUILD)
# LIBRARIES=1: library mode instead: every apigen stub (runtime, cuBLAS,
# cuBLASLt, cuFFT, cuRAND, cuSPARSE, cuSOLVER, NVRTC, nvJitLink, cuDNN, NCCL and
# the driver) preloaded (PyTorch finds its wheel's libraries by path; the
# preloaded sonames win), one apigen-server-cuda-family; a library call is
# one message.
# FAMILY=0: driver mode against apigen-server-cuda (the driver alone; NVML
# is then refused) instead of the family server.
# Env: CASES (default "mlp_backward infer_cnn train_cnn train_transformer expandable
# cuda_graph pinned"),
# TRANSPORTS (default "unix shm tcp"), STEPS (training steps, default 200),
# PYTHON; TRACE_RT=1 (TRACE_STEPS, default 10): two traced runs per case and
# the calls that still make round trips per step ($OUT/roundtrips.txt).
# CASEDIR (default tests/gpu/torch): another folder of cases, e.g.
# tests/gpu/frameworks (CuPy, JAX, numba-cuda, cuda.core); TIMEOUT: seconds
# per run (default 900); WARM=0: no untimed native run first. A case that
# prints "guest-maps:" / "guest-devs:" on stderr (frameworks/common.py) is
# checked forwarded: only apigen's libcuda.so.1 mapped, no /dev/nvidia* open
# (else "NOT FORWARDED").
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD:-$root/build-gpu-driver}
py=${PYTHON:-python3}
OUT=${OUT:-$root/torch-cases-out}
cases=${CASES:-mlp_backward infer_cnn train_cnn train_transformer expandable cuda_graph pinned}
transports=${TRANSPORTS:-unix shm tcp}
steps=${STEPS:-200}
casedir=${CASEDIR:-$root/tests/gpu/torch}
tmo=${TIMEOUT:-900}
mkdir -p "$OUT"
# the family server where it was built (driver, runtime, NVML and the
# libraries: what a GPU machine would serve); driver mode's guest reaches only
# its driver and NVML
server=$build/examples/cuda/apigen-server-cuda-family
if [ "${LIBRARIES:-0}" != 1 ] && { [ "${FAMILY:-1}" = 0 ] || [ ! -x "$server" ]; }; then
    server=$build/examples/cuda/apigen-server-cuda
fi
preload=
# library mode's preloads: scripts/cuda-run's (every CUDA-family stub of the build)
[ "${LIBRARIES:-0}" = 1 ] && preload=$(sh "$root/scripts/cuda-run" --build "$build" --preload-list)
[ -x "$server" ] || { echo "torch-cases.sh: no $server"; exit 2; }
tmp=$(mktemp -d /tmp/apigen-torch-cases.XXXXXX)
# driver mode: only the driver stub (and the guest runtime it needs) on the
# library path. build/stub also holds the cuDNN, cuBLAS, ... stubs: NVIDIA's
# libcudnn.so.9, loaded by path, would load apigen's libcudnn_graph.so.9 & co
# by soname from there (a real library over parts of a stubbed one hung in
# conv forward on the H200, 2026-11-26)
libdir=$build/stub
[ "${LIBRARIES:-0}" = 1 ] || libdir=$build/stub-driver # made with cuda_stub
port=$((20000 + $$ % 20000))
"$server" --listen "unix://$tmp/cuda.sock" --listen "tcp://127.0.0.1:$port" --listen "shm://apigen-tc-$$" \
    > "$OUT/server.log" 2>&1 &
spid=$!
i=0; while [ ! -S "$tmp/cuda.sock" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
url() { case $1 in unix) echo "unix://$tmp/cuda.sock" ;; tcp) echo "tcp://127.0.0.1:$port" ;; shm) echo "shm://apigen-tc-$$" ;; esac; }
secs() { sed -n 's/^seconds //p' "$1" | tail -1; }
# a forwarded run's own report of what it held (cases that give one): every
# mapped libcuda/libnvidia file is one of apigen's stubs (libcuda.so.1,
# libnvidia-ml.so.1 in $libdir), no /dev/nvidia* was open
own=$(cd "$libdir" && pwd -P)
forwarded() {
    grep -q '^guest-maps:' "$1" || return 0
    for m in $(sed -n 's/^guest-maps: //p' "$1" | tail -1); do
        [ "$m" = none ] || [ "$(dirname "$m")" = "$own" ] || return 1
    done
    [ "$(sed -n 's/^guest-devs: //p' "$1" | tail -1)" = none ]
}
printf '%-18s | %-10s' case native > "$OUT/table.txt"
for t in $transports; do printf ' | %-26s' "$t" >> "$OUT/table.txt"; done
echo >> "$OUT/table.txt"
fail=0
for c in $cases; do
    # once natively untimed first: the first run of a case pays for the page
    # cache, cuDNN's and the GPU's warm-up (0.73-0.83 s on one case before)
    [ "${WARM:-1}" = 0 ] || ( cd "$casedir" && timeout "$tmo" "$py" "$c.py" 10 ) > /dev/null 2>&1
    ( cd "$casedir" && timeout "$tmo" "$py" "$c.py" "$steps" ) > "$OUT/$c.native.out" 2> "$OUT/$c.native.err"
    nrc=$?
    ns=$(secs "$OUT/$c.native.err")
    printf '%-18s | %-10s' "$c" "rc $nrc ${ns:+${ns}s}" >> "$OUT/table.txt"
    for t in $transports; do
        ( cd "$casedir" && APIGEN_SERVER=$(url "$t") LD_PRELOAD="$preload" LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
            timeout "$tmo" "$py" "$c.py" "$steps" ) > "$OUT/$c.$t.out" 2> "$OUT/$c.$t.err"
        frc=$?
        fs=$(secs "$OUT/$c.$t.err")
        ratio=
        [ -n "$ns" ] && [ -n "$fs" ] && ratio=$(awk -v a="$fs" -v b="$ns" 'BEGIN { if (a > 0) printf "%.2fx", b / a }')
        if ! forwarded "$OUT/$c.$t.err"; then
            printf ' | %-26s' "NOT FORWARDED (rc $frc)" >> "$OUT/table.txt"; fail=1
        elif [ "$frc" = "$nrc" ] && cmp -s "$OUT/$c.native.out" "$OUT/$c.$t.out"; then
            printf ' | %-26s' "identical ${fs:+${fs}s $ratio}" >> "$OUT/table.txt"
        else
            printf ' | %-26s' "DIFFERS (rc $frc)" >> "$OUT/table.txt"; fail=1
        fi
    done
    echo >> "$OUT/table.txt"
done
# TRACE_RT=1: each case twice more over unix, TRACE_STEPS and 2 x TRACE_STEPS
# steps (default 10), the guest traced (APIGEN_TRACE): the synchronous round
# trips per training step (the difference of the two runs over TRACE_STEPS:
# set-up cancels) and which calls make them (one "apigen wire [pid]: rt CALL"
# line each; queued calls make none)
if [ "${TRACE_RT:-0}" = 1 ]; then
    ts=${TRACE_STEPS:-10}
    for c in $cases; do
        for n in $ts $((2 * ts)); do
            rm -f "$OUT/$c.$n.trace"
            ( cd "$root/tests/gpu/torch" && APIGEN_SERVER=$(url unix) APIGEN_TRACE="$OUT/$c.$n.trace" LD_PRELOAD="$preload" \
                LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" timeout 900 "$py" "$c.py" "$n" ) \
                > "$OUT/$c.$n.trace.out" 2> "$OUT/$c.$n.trace.err"
            sed -n 's/.*apigen wire \[[0-9]*\]: rt \([A-Za-z0-9_]*\) .*/\1/p' "$OUT/$c.$n.trace" | sort | uniq -c |
                awk '{ print $2, $1 }' | sort > "$OUT/$c.$n.rt"
            gzip -f "$OUT/$c.$n.trace"
        done
        a=$(awk '{ s += $2 } END { print s + 0 }' "$OUT/$c.$ts.rt")
        b=$(awk '{ s += $2 } END { print s + 0 }' "$OUT/$c.$((2 * ts)).rt")
        echo "== $c: round trips per step $(awk -v a="$a" -v b="$b" -v n="$ts" 'BEGIN { printf "%.1f", (b - a) / n }')" \
             "($a in $ts steps, $b in $((2 * ts)), set-up included); per step, by call:" >> "$OUT/roundtrips.txt"
        join -a 2 -e 0 -o 0,1.2,2.2 "$OUT/$c.$ts.rt" "$OUT/$c.$((2 * ts)).rt" |
            awk -v n="$ts" '{ d = ($3 - $2) / n; if (d > 0) printf "%8.1f %s\n", d, $1 }' | sort -rn | head -25 >> "$OUT/roundtrips.txt"
    done
fi
kill "$spid" 2>/dev/null; wait "$spid" 2>/dev/null
rm -rf "$tmp"
cat "$OUT/table.txt"
[ -f "$OUT/roundtrips.txt" ] && cat "$OUT/roundtrips.txt"
echo "(seconds: the training loop's own time; ratio: native time / forwarded time)"
for c in $cases; do for t in $transports; do
    cmp -s "$OUT/$c.native.out" "$OUT/$c.$t.out" 2>/dev/null && continue
    echo "== $c over $t: first differences"; diff "$OUT/$c.native.out" "$OUT/$c.$t.out" | head -6
    tail -4 "$OUT/$c.$t.err"
done; done
exit $fail
