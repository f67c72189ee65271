#!/bin/sh
# tests/cuda/patterns_ci.sh BUILD STUB TRANSPORTS [OUT]
# bench/patterns.cu without a GPU: the stand-in devices run its kernels on
# the CPU (tests/cuda/fake_pattern_kernels.h). STUB is "runtime"
# (bench_patterns_rt, nvcc -cudart shared, over build/stub's libcudart and
# apigen-server-cudart with tests/cuda/fake_kernels.c's device preloaded) or
# "driver" (bench_patterns_drv, NVIDIA's static runtime, over build/stub-driver's
# libcuda.so.1 and apigen-server-cuda with tests/cuda/driver/fake_driver.c
# preloaded, the toolkit's stubs library as libcuda.so.1 under it).
# The worker runs natively (the stand-in preloaded into it) and forwarded over
# each of TRANSPORTS (comma-separated: unix,tcp,shm), with BENCH_PATTERN_COUNT=1
# and APIGEN_TRACE: each loop 10 and 20 times between markers (with
# BENCH_PATTERN_SMALL=1: multipass and constant over 64K elements, the same
# calls on a CPU that runs their kernels 100x faster); every run must
# exit 0 with nothing on stderr (the worker checks its results: the answers
# the stand-in computes natively). The driver build runs forwarded only (see
# below). Then bench/patterns_table.sh counts, per
# pattern and transport, the round trips of one iteration (no times: the
# "native"/"forwarded" columns say "-"); the table goes to stdout and, with
# OUT, to OUT/STUB.table.txt (the trace to OUT/STUB.trace).
# The synchronous round trips of one iteration of the loop patterns are
# then asserted, per transport: the minimum docs/performance.md derives
# ("Round trips per iteration of the program patterns"), the same for
# both stubs. The stand-in device makes them deterministic (no times).
set -u
build=$1 stub=$2 transports=$(echo "$3" | tr ',' ' ') out=${4:-}
root=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/patterns-ci.XXXXXX")
spid=
cleanup() {
    [ -n "$spid" ] && kill "$spid" 2>/dev/null && wait "$spid" 2>/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT INT TERM
case $stub in
runtime)
    worker=$build/bench/bench_patterns_rt server=$build/examples/cuda/apigen-server-cudart
    fake=$build/tests/cuda/libcudart_fake_patterns.so guestlib=$build/stub serverlib= ;;
driver)
    worker=$build/bench/bench_patterns_drv server=$build/examples/cuda/apigen-server-cuda
    fake=$build/tests/cuda/libcuda_fake_driver.so guestlib=$build/stub-driver serverlib=$build/nodriver ;;
*) echo "patterns_ci.sh: STUB is runtime or driver, not $stub"; exit 2 ;;
esac
for f in "$worker" "$server" "$fake"; do
    [ -e "$f" ] || { echo "SKIP: no $f (needs nvcc and the CUDA toolkit at configure time)"; exit 77; }
done
# natively: the stand-in preloaded into the worker (runtime only: NVIDIA's
# static runtime finds its driver through cuGetProcAddress and export
# tables, which the stand-in driver does not have; the driver build's
# forwarded runs check their results all the same)
if [ "$stub" = runtime ] && ! LD_LIBRARY_PATH=${serverlib:+$serverlib:}${LD_LIBRARY_PATH:-} LD_PRELOAD=$fake BENCH_PATTERN_COUNT=1 BENCH_PATTERN_SMALL=1 \
        timeout 300 "$worker" > "$tmp/native.out" 2> "$tmp/native.err" || [ -s "$tmp/native.err" ]; then
    echo "FAIL: $stub patterns natively on the stand-in device:"; sed 's/^/  /' "$tmp/native.err"
    exit 1
fi
fail=0
metrics="$(grep -o 'loop_pattern("[a-z_0-9]*"' "$root/bench/patterns.cu" | sed 's/.*("//;s/"//')"
for size in 44B 4M 64M; do metrics="$metrics pin_alloc_$size pin_first_$size pin_later_$size"; done
for tr in $transports; do
    case $tr in
    unix) url="unix://$tmp/s.sock" ;;
    tcp) url="tcp://127.0.0.1:0" ;;
    shm) url="shm://apigen-patterns-$$" ;;
    *) echo "patterns_ci.sh: unknown transport $tr"; exit 2 ;;
    esac
    : > "$tmp/server.log"
    # shellcheck disable=SC2086 # the isolation words split on purpose
    APIGEN_TRACE=$tmp/trace LD_LIBRARY_PATH=${serverlib:+$serverlib:}${LD_LIBRARY_PATH:-} LD_PRELOAD=$fake \
        "$server" --listen "$url" > "$tmp/server.log" 2>&1 &
    spid=$!
    n=0
    while [ $n -lt 200 ] && ! grep -q listening "$tmp/server.log"; do sleep 0.05; n=$((n + 1)); done
    [ "$tr" = tcp ] && url=$(sed -n 's/.*listening on \([a-z]*:[^ ]*\) .*/\1/p' "$tmp/server.log" | head -1)
    APIGEN_SERVER=$url APIGEN_TRACE=$tmp/trace APIGEN_TIMEOUT_MS=60000 LD_LIBRARY_PATH=$guestlib \
        BENCH_PATTERN_COUNT=1 BENCH_PATTERN_SMALL=1 timeout 300 "$worker" > "$tmp/fw.out" 2> "$tmp/fw.err"
    rc=$?
    kill "$spid" 2>/dev/null && wait "$spid" 2>/dev/null
    spid=
    if [ $rc != 0 ] || grep -v '^apigen' "$tmp/fw.err" | grep -q .; then
        echo "FAIL: $stub patterns over $tr: exit $rc"
        grep -v '^apigen' "$tmp/fw.err" | sed 's/^/  /' | head -20
        sed 's/^/  server: /' "$tmp/server.log" | grep -v 'trace:' | head -20
        fail=1
    fi
done
# a timing-free TSV for the table: the patterns, no times
{
    printf 'transports'; for tr in $transports; do printf '\t%s' "$tr"; done; printf '\n'
    for m in $metrics; do
        printf 'metric\t%s\tus\tlo\t-' "$m"; for tr in $transports; do printf '\t-'; done; printf '\n'
    done
} > "$tmp/tsv"
sh "$root/bench/patterns_table.sh" "$stub" "$tmp/tsv" "$tmp/trace" > "$tmp/table" || fail=1
cat "$tmp/table"
# pattern:sync round trips per iteration (the one-shot pin_* rows are not
# loops: their calls are the allocation's and the copy's, item 2's business)
expect="spin_2us:0 spin_5us:0 spin_20us:0 params_1:0 params_8:0 params_16:0 streams_events:0
reduce_copy:1 multipass:1 constant:1"
for e in $expect; do
    p=${e%%:*} want=${e#*:}
    for tr in $transports; do
        got=$(awk -v p="$p" -v s="$stub" -v t="$tr" '$1 == p && $2 == s && $3 == t { print $9; exit }' "$tmp/table")
        if [ -z "$got" ]; then
            echo "FAIL: $stub $p over $tr: no row in the table (the pattern did not run?)"
            fail=1
        elif ! awk -v g="$got" -v w="$want" 'BEGIN { exit !(g + 0 == w + 0) }'; then
            echo "FAIL: $stub $p over $tr: $got synchronous round trips per iteration, expected $want"
            echo "  (the functions behind them: the 'sync' lines of $p $stub $tr above)"
            fail=1
        fi
    done
done
if [ -n "$out" ]; then
    mkdir -p "$out" && cp "$tmp/table" "$out/$stub.table.txt" && cp "$tmp/trace" "$out/$stub.trace"
fi
[ $fail = 0 ] && echo "PASS: $stub patterns natively and over $transports on the stand-in device, round trips per iteration as expected"
exit $fail
