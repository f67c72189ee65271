#!/bin/sh
# tests/gpu/driver.sh: the CUDA driver stub (libcuda.so.1) on a machine with
# an NVIDIA GPU and the CUDA 13 toolkit. Builds everything (APIGEN_CUDA_ARCH
# sm_90 unless CUDA_ARCH says otherwise), starts apigen-server-cuda (unix,
# tcp and shm, a process per session: a sticky error such as the `fault`
# example's illegal address stays in its own session's context), and runs, natively
# and forwarded over each transport, comparing stdout and exit status:
#   - driver_basic: a driver-API program (tests/cuda/driver/driver_basic.c);
#   - driver_fixes: CUkernel as CUfunction, launch configurations the driver
#     refuses, oversized copies (tests/cuda/driver/driver_fixes.c);
#   - driver_graph_host: a graph host node between two kernel nodes, its
#     Get/Set/ExecSetParams and the generic node calls
#     (tests/cuda/driver/driver_graph_host.c);
#   - driver_memory: virtual memory (reserve, create, map, set access,
#     growing a mapping) and memory pools (tests/cuda/driver/driver_memory.c);
#   - every examples/cuda program built with plain nvcc (static runtime: it
#     calls the driver, found first on LD_LIBRARY_PATH);
#   - the same built with -cudart shared, run with NVIDIA's real
#     libcudart.so.13 over the driver stub;
# then the bad-input program forwarded, and a check on a running guest
# (/proc/PID/maps and /proc/PID/fd) that it loaded no NVIDIA libcuda.so.1
# and opened no /dev/nvidia*. Prints a table with each failing case's first
# error; results (table and logs) go to $OUT when it is set.
# NVIDIA's runtime asks for private export tables (cuGetExportTable) early:
# until the stub has them, the runtime cases fail at that point, and the
# table says so.
#
#   tests/gpu/driver.sh            (from the repository root)
# Environment: BUILD (default build-gpu-driver), CUDA_ARCH (default sm_90), KEEP=1, EXAMPLES (a list: only those examples).
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 1
build=${BUILD:-build-gpu-driver}
arch=${CUDA_ARCH:-sm_90}
if [ -z "${CUDA_HOME:-}" ]; then
    if command -v nvcc >/dev/null 2>&1; then CUDA_HOME=$(dirname "$(dirname "$(command -v nvcc)")")
    else CUDA_HOME=/usr/local/cuda; fi
fi
export CUDA_HOME PATH="$CUDA_HOME/bin:$PATH"
reallib=$CUDA_HOME/lib64
[ -e "$reallib/libcudart.so.13" ] || reallib=$CUDA_HOME/targets/$(uname -m)-linux/lib
command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L
case $build in /*) ;; *) build=$root/$build ;; esac
mkdir -p "$build"
echo "== build ($build, CUDA_HOME=$CUDA_HOME, arch $arch)"
cmake -S . -B "$build" -DAPIGEN_BUILD_GENERATOR=OFF -DCMAKE_BUILD_TYPE=Release \
      -DCUDAToolkit_ROOT="$CUDA_HOME" -DAPIGEN_CUDA_ARCH="$arch" > "$build/driver.configure.log" 2>&1 ||
    { cat "$build/driver.configure.log"; exit 1; }
cmake --build "$build" -j"$(nproc)" --target cuda_stub apigen-server-cuda cuda_examples \
      cuda_driver_basic cuda_driver_fixes cuda_driver_graph_host cuda_driver_memory cuda_driver_bad cuda_driver_kernels > "$build/driver.build.log" 2>&1 ||
    { tail -n 50 "$build/driver.build.log"; exit 1; }
stub=$build/stub
server=$build/examples/cuda/apigen-server-cuda
shared=$build/examples/cuda
tdir=$build/tests/cuda
[ -x "$server" ] && [ -e "$stub/libcuda.so.1" ] || { echo "driver.sh: no stub or server built"; exit 1; }
# symbol parity: this toolkit's stubs library and the committed lists (CI
# checks the same lists), then the real driver alone, every difference
# printed; its whole export list goes to $OUT for tests/cuda/symbols/
sh tests/cuda/driver_parity.sh "$stub/libcuda.so.1" "$CUDA_HOME/lib64/stubs/libcuda.so" \
    tests/cuda/symbols/libcuda-13.0-toolkit-stub.txt tests/cuda/symbols/libcuda-580-driver-beyond-stub.txt
real_cuda=$(ldconfig -p | sed -n 's/.*libcuda\.so\.1 (libc6,x86-64) => \(.*\)/\1/p' | head -1)
if [ -n "$real_cuda" ]; then
    echo "== parity with the real driver $(readlink -f "$real_cuda")"
    sh tests/cuda/driver_parity.sh "$stub/libcuda.so.1" "$real_cuda"
    if [ -n "${OUT:-}" ]; then
        mkdir -p "$OUT"
        nm -D --defined-only "$real_cuda" | awk '{print $3}' | sort -u > "$OUT/libcuda-driver-exports.txt"
        nm -D --defined-only "$CUDA_HOME/lib64/stubs/libcuda.so" | awk '{print $3}' | sort -u |
            comm -13 - "$OUT/libcuda-driver-exports.txt" > "$OUT/libcuda-driver-beyond-stub.txt"
    fi
fi

# the examples built with plain nvcc (static runtime)
examples=${EXAMPLES:-"vector_add matmul streams constant fault multithread callback graph graph_nodes pageable_copy capture_copy boundary mapped device_printf device_assert managed arrays multi_gpu registered modern ipc thrust rdc"}
static=$build/driver-static
mkdir -p "$static"
for e in $examples; do # in parallel (thrust alone takes most of a minute)
    src=examples/cuda/$e.cu # rdc: two units, separate compilation (examples/cuda/CMakeLists.txt)
    [ "$e" = rdc ] && src="-rdc=true examples/cuda/rdc/main.cu examples/cuda/rdc/lib.cu -lcudadevrt"
    # shellcheck disable=SC2086 # src: options and files split on spaces
    { nvcc -std=c++17 -O2 --extended-lambda -arch="$arch" -o "$static/$e" $src > "$static/$e.build.log" 2>&1 ||
        { echo "nvcc $e failed:"; tail -n 5 "$static/$e.build.log"; }; } &
done
wait
# only apigen's libcuda.so.1 (not its libcudart.so.13) in front of NVIDIA's runtime
only=$build/driver-only
mkdir -p "$only"
ln -sf "$stub/libcuda.so.1" "$only/libcuda.so.1"

logs=$(mktemp -d "${TMPDIR:-/tmp}/apigen-driver.XXXXXX")
port=$(( 30000 + ($$ % 20000) ))
shmname=apigen-driver-$$
"$server" --listen "unix://$logs/cuda.sock" --listen "tcp://127.0.0.1:$port" > "$logs/server.log" 2>&1 &
spid=$!
"$server" --listen "shm://$shmname" > "$logs/server-shm.log" 2>&1 &
spid2=$!
cleanup() {
    kill "$spid" "$spid2" 2>/dev/null; wait "$spid" "$spid2" 2>/dev/null
    if [ -n "${OUT:-}" ]; then mkdir -p "$OUT/driver-logs"; cp -r "$logs"/. "$OUT/driver-logs/"; fi
    [ "${KEEP:-0}" = 1 ] && echo "logs: $logs" || rm -rf "$logs"
}
trap cleanup EXIT INT TERM
i=0
while [ $i -lt 100 ] && ! { grep -q listening "$logs/server.log" && grep -q listening "$logs/server-shm.log"; } 2>/dev/null; do
    sleep 0.05; i=$((i + 1))
done
for p in "$spid" "$spid2"; do
    kill -0 "$p" 2>/dev/null || { echo "driver.sh: apigen-server-cuda did not start:"; cat "$logs"/server*.log; exit 1; }
done

run() { # KEY MODE LIBPATH PROGRAM [ARGS] -> $logs/KEY.MODE.{out,err,rc}
    key=$1 mode=$2 lp=$3
    shift 3
    case $mode in
    native) env LD_LIBRARY_PATH="$lp" timeout 300 "$@" > "$logs/$key.$mode.out" 2> "$logs/$key.$mode.err" ;;
    unix) env APIGEN_SERVER="unix://$logs/cuda.sock" LD_LIBRARY_PATH="$lp" timeout 300 "$@" > "$logs/$key.$mode.out" 2> "$logs/$key.$mode.err" ;;
    tcp) env APIGEN_SERVER="tcp://127.0.0.1:$port" LD_LIBRARY_PATH="$lp" timeout 300 "$@" > "$logs/$key.$mode.out" 2> "$logs/$key.$mode.err" ;;
    shm) env APIGEN_SERVER="shm://$shmname" LD_LIBRARY_PATH="$lp" timeout 300 "$@" > "$logs/$key.$mode.out" 2> "$logs/$key.$mode.err" ;;
    esac
    echo $? > "$logs/$key.$mode.rc"
}
first_error() { # KEY MODE: the first line that says what went wrong
    { grep -m1 -iE "apigen|error|fail" "$logs/$1.$2.err"; grep -m1 -iE "error|fail" "$logs/$1.$2.out"; } 2>/dev/null | head -n 1 | cut -c1-150
}
fails=0
table=$logs/table.txt
printf '%-30s | %-8s | %-8s | %-8s | %-8s | %s\n' case native unix tcp shm result > "$table"
printf '%s\n' "-------------------------------+----------+----------+----------+----------+-----------------" >> "$table"
compare() { # KEY FWD_LIBPATH NATIVE_LIBPATH PROGRAM [ARGS]
    key=$1 flp=$2 nlp=$3
    shift 3
    run "$key" native "$nlp" "$@"
    for m in unix tcp shm; do run "$key" $m "$flp" "$@"; done
    res=identical
    why=
    for m in unix tcp shm; do
        case $key.$m in
        *.capture_copy.tcp)
            # documented: the server reaches host memory of a captured copy
            # only through the shared-memory arena; over tcp it refuses such
            # copies (CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, the capture
            # invalidated): every capture ends with
            # cudaErrorStreamCaptureInvalidated, no graph runs, and the stream
            # goes on (the program's later calls succeed)
            if [ "$(grep -E '^(pinned|pageable) ' "$logs/$key.$m.out" | grep -c 'end cudaErrorStreamCaptureInvalidated')" = 8 ] &&
               ! grep -q 'launches' "$logs/$key.$m.out" &&
               [ "$(grep '^after' "$logs/$key.$m.out")" = "$(grep '^after' "$logs/$key.native.out")" ]; then
                why="${why:-tcp: captured host copies refused, as documented}"
            else
                res="DIFFERS"; why="${why:-$m: $(first_error "$key" $m)}"
            fi
            continue ;;
        esac
        if [ "$(cat "$logs/$key.$m.rc")" != "$(cat "$logs/$key.native.rc")" ] ||
           ! cmp -s "$logs/$key.native.out" "$logs/$key.$m.out"; then
            res="DIFFERS"
            [ -z "$why" ] && why="$m: $(first_error "$key" $m)"
        fi
    done
    case $key in
    *device_assert)
        # the assert message is on stderr natively and forwarded (runtime/output.c)
        for m in native unix tcp shm; do
            grep -q 'Assertion `v\[i\] > 0` failed' "$logs/$key.$m.err" ||
                { res="DIFFERS"; why="${why:-$m: no assert message on stderr}"; }
        done ;;
    esac
    [ "$res" = identical ] || fails=$((fails + 1))
    printf '%-30s | rc %-5s | rc %-5s | rc %-5s | rc %-5s | %s %s\n' "$key" \
        "$(cat "$logs/$key.native.rc")" "$(cat "$logs/$key.unix.rc")" "$(cat "$logs/$key.tcp.rc")" \
        "$(cat "$logs/$key.shm.rc")" "$res" "$why" >> "$table"
}

dk=$tdir/driver_kernels
compare driver_basic "$stub" "" "$tdir/cuda_driver_basic" "$dk.ptx" "$dk.fatbin"
# CUkernel as CUfunction, refused launch configurations, oversized copies
compare driver_fixes "$stub" "" "$tdir/cuda_driver_fixes" "$dk.ptx" "$dk.fatbin"
# a host node between kernel nodes, at each of three launches; Get/Set/ExecSetParams
compare driver_graph_host "$stub" "" "$tdir/cuda_driver_graph_host" "$dk.ptx"
compare driver_memory "$stub" "" "$tdir/cuda_driver_memory" "$dk.ptx"
for e in $examples; do
    [ -x "$static/$e" ] && compare "static.$e" "$stub" "" "$static/$e"
done
for e in $examples; do
    [ -x "$shared/$e" ] && compare "shared-real-cudart.$e" "$only:$reallib" "$reallib" "$shared/$e"
done

# bad input, forwarded (unix): each case's line
run bad unix "$stub" "$tdir/cuda_driver_bad" "$dk.ptx"
printf '\nbad input (forwarded, unix), exit %s:\n' "$(cat "$logs/bad.unix.rc")" >> "$table"
sed 's/^/  /' "$logs/bad.unix.out" >> "$table"

# a running guest: no NVIDIA libcuda.so.1 mapped, no /dev/nvidia* open
APIGEN_TEST_HOLD_MS=3000 APIGEN_SERVER="unix://$logs/cuda.sock" LD_LIBRARY_PATH="$stub" \
    "$tdir/cuda_driver_basic" "$dk.ptx" "$dk.fatbin" > "$logs/hold.out" 2> "$logs/hold.err" &
gpid=$!
i=0
while [ $i -lt 200 ] && ! grep -q '^done' "$logs/hold.out" 2>/dev/null; do sleep 0.05; i=$((i + 1)); done
maps=$(grep -E 'libcuda\.so|libnvidia' "/proc/$gpid/maps" 2>/dev/null | awk '{print $6}' | sort -u)
devs=$(ls -l "/proc/$gpid/fd" 2>/dev/null | grep -o '/dev/nvidia[^ ]*' | sort -u)
wait "$gpid"
own=$(readlink -f "$stub/libcuda.so.1")
bad_maps=$(for m in $maps; do [ "$(readlink -f "$m")" = "$own" ] || echo "$m"; done)
if grep -q '^done' "$logs/hold.out" && [ -z "$bad_maps" ] && [ -z "$devs" ]; then
    printf '\nrunning guest: maps only apigen'"'"'s libcuda.so.1 (%s), no /dev/nvidia* open: ok\n' "$maps" >> "$table"
else
    fails=$((fails + 1))
    printf '\nrunning guest: FAILED (finished: %s; NVIDIA libraries mapped: %s; devices open: %s)\n' \
        "$(grep -c '^done' "$logs/hold.out")" "${bad_maps:-none}" "${devs:-none}" >> "$table"
fi

echo
cat "$table"
echo "$fails case(s) differ"
if [ -n "${OUT:-}" ]; then mkdir -p "$OUT"; cp "$table" "$OUT/driver-table.txt"; fi
[ "$fails" = 0 ]
