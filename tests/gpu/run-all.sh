#!/bin/sh
# tests/gpu/run-all.sh: on a machine with an NVIDIA GPU and the CUDA 13
# toolkit, build the cudart stub, its server and the CUDA examples from the
# committed generated/ sources (no libclang needed), start one server
# (unix and tcp), run every example natively and forwarded over each
# transport, compare stdout and exit status, and print a table.
#
#   tests/gpu/run-all.sh            (from the repository root)
#
# Needs: cmake >= 3.20, gcc/g++, make, the CUDA 13 toolkit (CUDA_HOME, or
# nvcc on PATH, or /usr/local/cuda). Environment: BUILD (default build-gpu),
# CUDA_ARCH (nvcc -arch, default native), EXAMPLE_TIMES=1 to also print the
# examples' own timings (stderr), KEEP=1 to keep the logs folder, EXAMPLES (a list: only those examples).
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 1
build=${BUILD:-build-gpu}
arch=${CUDA_ARCH-native}
if [ -z "${CUDA_HOME:-}" ]; then
    if command -v nvcc >/dev/null 2>&1; then CUDA_HOME=$(dirname "$(dirname "$(command -v nvcc)")")
    else CUDA_HOME=/usr/local/cuda; fi
fi
export CUDA_HOME
[ -x "$CUDA_HOME/bin/nvcc" ] || { echo "run-all: no nvcc under CUDA_HOME=$CUDA_HOME"; exit 1; }
export PATH="$CUDA_HOME/bin:$PATH"
reallib=$CUDA_HOME/lib64
[ -e "$reallib/libcudart.so.13" ] || reallib=$CUDA_HOME/targets/$(uname -m)-linux/lib
for t in cmake make gcc g++; do
    command -v $t >/dev/null 2>&1 || { echo "run-all: '$t' is missing (apt-get install -y cmake make gcc g++)"; exit 1; }
done
command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L

case $build in /*) ;; *) build=$root/$build ;; esac
mkdir -p "$build"
echo "== build ($build, CUDA_HOME=$CUDA_HOME, -arch=$arch)"
cmake -S . -B "$build" -DAPIGEN_BUILD_GENERATOR=OFF -DCMAKE_BUILD_TYPE=Release \
      -DCUDAToolkit_ROOT="$CUDA_HOME" -DAPIGEN_CUDA_ARCH="$arch" > "$build/run-all.configure.log" 2>&1 ||
    { cat "$build/run-all.configure.log"; exit 1; }
cmake --build "$build" -j"$(nproc)" --target cudart_stub apigen-server-cudart cuda_examples cuda_template_examples cuda_unsupported \
    > "$build/run-all.build.log" 2>&1 || { tail -n 50 "$build/run-all.build.log"; exit 1; }
stub=$build/stub
server=$build/examples/cuda/apigen-server-cudart
ex=$build/examples/cuda
[ -x "$server" ] && [ -e "$stub/libcudart.so.13" ] || { echo "run-all: the build did not produce the stub and the server:"; tail -n 30 "$build/run-all.build.log"; exit 1; }
sh tests/cuda/parity.sh "$reallib/libcudart.so.13" "$stub/libcudart.so.13" | head -n 5

logs=$(mktemp -d "${TMPDIR:-/tmp}/apigen-gpu.XXXXXX")
port=$(( 30000 + ($$ % 20000) ))
shmname=apigen-gpu-$$
"$server" --listen "unix://$logs/cudart.sock" --listen "tcp://127.0.0.1:$port" --listen "shm://$shmname" > "$logs/server.log" 2>&1 &
spid=$!
cleanup() { kill "$spid" 2>/dev/null; wait "$spid" 2>/dev/null; [ "${KEEP:-0}" = 1 ] && echo "logs: $logs" || rm -rf "$logs"; }
trap cleanup EXIT INT TERM
i=0
while [ $i -lt 100 ] && [ "$(grep -c listening "$logs/server.log" 2>/dev/null)" -lt 3 ]; do sleep 0.05; i=$((i + 1)); done

now_ms() { date +%s%3N; }
run() { # NAME MODE -> writes $logs/NAME.MODE.{out,err,rc,ms}
    name=$1 mode=$2
    t0=$(now_ms)
    case $mode in
    native) LD_LIBRARY_PATH="$reallib" timeout 300 "$ex/$name" > "$logs/$name.$mode.out" 2> "$logs/$name.$mode.err" ;;
    unix) APIGEN_SERVER="unix://$logs/cudart.sock" LD_LIBRARY_PATH="$stub" timeout 300 "$ex/$name" > "$logs/$name.$mode.out" 2> "$logs/$name.$mode.err" ;;
    tcp) APIGEN_SERVER="tcp://127.0.0.1:$port" LD_LIBRARY_PATH="$stub" timeout 300 "$ex/$name" > "$logs/$name.$mode.out" 2> "$logs/$name.$mode.err" ;;
    shm) APIGEN_SERVER="shm://$shmname" LD_LIBRARY_PATH="$stub" timeout 300 "$ex/$name" > "$logs/$name.$mode.out" 2> "$logs/$name.$mode.err" ;;
    esac
    echo $? > "$logs/$name.$mode.rc"
    echo $(( $(now_ms) - t0 )) > "$logs/$name.$mode.ms"
}

# fault makes its kernel fault (a sticky cudaErrorIllegalAddress) before the
# examples after it: they must not notice (a process per session).
examples=${EXAMPLES:-"vector_add matmul streams constant fault multithread callback graph graph_nodes pageable_copy capture_copy boundary mapped device_printf device_assert managed arrays multi_gpu registered modern ipc thrust rdc"}
fails=0
printf '\n%-12s | %-16s | %-16s | %-16s | %-16s | %s\n' example "native" "unix" "tcp" "shm" "result"
printf '%s\n' "-------------+------------------+------------------+------------------+------------------+-------------------------"
for e in $examples; do
    for m in native unix tcp shm; do run "$e" "$m"; done
    res=identical
    for m in unix tcp shm; do
        if [ "$e.$m" = capture_copy.tcp ]; then
            # documented: copies of host memory captured into a graph need the
            # arena (a server on this machine); over tcp the first one of each
            # capture is refused with cudaErrorStreamCaptureUnsupported and the
            # capture invalidated: every capture ends with
            # cudaErrorStreamCaptureInvalidated, no graph runs, the stream goes on
            u=cudaErrorStreamCaptureUnsupported
            if [ "$(grep -c "H2D $u" "$logs/$e.$m.out")" != 6 ] ||
               [ "$(grep -c "shapes: 2D $u/" "$logs/$e.$m.out")" != 2 ] ||
               [ "$(grep -E '^(pinned|pageable) ' "$logs/$e.$m.out" | grep -c 'end cudaErrorStreamCaptureInvalidated')" != 8 ] ||
               grep -q 'launches' "$logs/$e.$m.out" ||
               [ "$(grep '^after' "$logs/$e.$m.out")" != "$(grep '^after' "$logs/$e.native.out")" ]; then
                res="DIFFERS ($m)"; fails=$((fails + 1))
            else res="identical (tcp: refused, as documented)"; fi
            continue
        fi
        if [ "$e" = modern ]; then
            # documented: this server serves the runtime only. The driver's
            # entry point that cudaGetDriverEntryPointByVersion hands out is the
            # driver stub's, whose API it does not serve: a clear error
            # (CUDA_ERROR_DEVICE_UNAVAILABLE, 46). apigen-server-cuda-family
            # serves both; driver.sh runs the program over the driver stub.
            sed 's/^\(cuDriverGetVersion through cudaGetDriverEntryPointByVersion:\) .*/\1 OTHER (rc 46)/' \
                "$logs/$e.native.out" > "$logs/$e.want"
            if [ "$(cat "$logs/$e.$m.rc")" = "$(cat "$logs/$e.native.rc")" ] && cmp -s "$logs/$e.want" "$logs/$e.$m.out" &&
               grep -q "API 'cuda' is not served here" "$logs/$e.$m.err"; then
                case $res in DIFFERS*) ;; *) res="identical (the driver's entry point: refused by a runtime-only server, as documented)" ;; esac
            else res="DIFFERS ($m)"; fails=$((fails + 1)); fi
            continue
        fi
        if [ "$(cat "$logs/$e.$m.rc")" != "$(cat "$logs/$e.native.rc")" ] || ! cmp -s "$logs/$e.native.out" "$logs/$e.$m.out"; then
            res="DIFFERS ($m)"; fails=$((fails + 1))
        fi
    done
    if [ "$e" = device_assert ]; then
        # the assert message is on stderr natively and forwarded (runtime/output.c)
        for m in native unix tcp shm; do
            grep -q 'Assertion `v\[i\] > 0` failed' "$logs/$e.$m.err" ||
                { res="DIFFERS ($m: no assert message on stderr)"; fails=$((fails + 1)); }
        done
    fi
    nrc=$(cat "$logs/$e.native.rc")
    [ "$nrc" = 0 ] || res="$res; native exit $nrc"
    [ "$nrc" -ge 124 ] && fails=$((fails + 1))   # did not run, timed out or crashed
    cell() { printf 'exit %s %7s ms' "$(cat "$logs/$1.$2.rc")" "$(cat "$logs/$1.$2.ms")"; }
    printf '%-12s | %-16s | %-16s | %-16s | %-16s | %s\n' "$e" "$(cell "$e" native)" "$(cell "$e" unix)" "$(cell "$e" tcp)" "$(cell "$e" shm)" "$res"
done
# unsupported calls: a clear error value, the process goes on
APIGEN_SERVER="unix://$logs/cudart.sock" LD_LIBRARY_PATH="$stub" timeout 60 "$build/tests/cuda/cuda_unsupported" > "$logs/unsupported.out" 2> "$logs/unsupported.err"
urc=$?
printf '%-12s | %-16s | %-16s | %-16s | %-16s | %s\n' unsupported "-" "exit $urc" "-" "-" "$(head -n 1 "$logs/unsupported.out" | cut -c1-60)"
[ $urc = 0 ] || fails=$((fails + 1))

echo
for e in $examples; do
    echo "== $e (native stdout)"; sed 's/^/   /' "$logs/$e.native.out"
    for m in unix tcp shm; do
        if ! cmp -s "$logs/$e.native.out" "$logs/$e.$m.out"; then
            echo "== $e ($m stdout differs)"; diff -u "$logs/$e.native.out" "$logs/$e.$m.out" | sed 's/^/   /'
            echo "== $e ($m stderr)"; sed 's/^/   /' "$logs/$e.$m.err"
        fi
    done
    [ "${EXAMPLE_TIMES:-0}" != 0 ] && for m in native unix tcp shm; do sed "s/^/   [$m] /" "$logs/$e.$m.err"; done
done
if [ -s "$logs/server.log" ]; then echo "== server log (last lines)"; tail -n 20 "$logs/server.log" | sed 's/^/   /'; fi
# a session process that dies by a signal is a server bug even when the
# client's output came out right (it happens at session end: the cleanup)
crashed=$(grep -c "was killed by signal" "$logs/server.log")
[ "$crashed" = 0 ] || { echo "run-all: $crashed session process(es) crashed (stack in the server log above)"; fails=$((fails + crashed)); }
echo
if [ $fails = 0 ]; then echo "run-all: every example gave identical output natively and forwarded (unix, tcp, shm)"
else echo "run-all: $fails comparison(s) failed"; fi
[ $fails = 0 ]
