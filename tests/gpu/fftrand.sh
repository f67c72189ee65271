#!/bin/sh
# tests/gpu/fftrand.sh: the cuFFT (libcufft.so.12) and cuRAND
# (libcurand.so.10) stubs on a machine with an NVIDIA GPU and the CUDA 13
# toolkit, as members of the CUDA family: the programs use the runtime's
# cudaMalloc memory and cudaStreamCreate streams in every library call, so
# the runtime's stub and the library stubs share one session of
# apigen-server-cuda-family (over NVIDIA's libraries). Builds the stubs, the
# family server and the examples, starts the server (unix, tcp and shm, a
# process per session) and runs each example natively (NVIDIA's libraries)
# and forwarded over each transport, comparing stdout and exit status:
#   - cufft/roundtrip: a batched 1D C2C forward and inverse on a stream of
#     the program, checked against a DFT on the CPU; a 2D R2C/C2R through
#     cufftMakePlanMany with a work area of the program's (no auto
#     allocation, cufftGetSize, cufftSetWorkArea);
#   - curand/random: host generators (output in host memory: pseudo, Poisson,
#     Sobol32, the direction vectors and scramble constants) and a device
#     generator (Philox, on the program's stream, cudaMalloc output; uniform,
#     normal, log-normal), a Poisson distribution created and destroyed;
#     values printed, statistics checked;
#   - curand/discrete: a kernel (nvcc -cudart shared) draws from a Poisson
#     distribution made by curandCreatePoissonDistribution (curand_discrete):
#     the distribution's address is the device's, forwarded too.
# Then the bad-input programs forwarded (must print tests/fftrand/*_badinput.expected:
# forged and destroyed plans and generators, memory the client never
# allocated, a work area smaller than the plan's, a buffer shorter than
# num; another client's memory, held by a second program), symbol parity with the toolkit's libraries, and a check that a
# forwarded run loaded no NVIDIA library (LD_DEBUG=files). Prints a table;
# results go to $OUT when it is set.
#
#   tests/gpu/fftrand.sh            (from the repository root)
# Environment: BUILD (default build-gpu-fftrand), KEEP=1 keeps the logs.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 1
build=${BUILD:-build-gpu-fftrand}
if [ -z "${CUDA_HOME:-}" ]; then
    if command -v nvcc >/dev/null 2>&1; then CUDA_HOME=$(dirname "$(dirname "$(command -v nvcc)")")
    else CUDA_HOME=/usr/local/cuda; fi
fi
export CUDA_HOME PATH="$CUDA_HOME/bin:$PATH"
reallib=$CUDA_HOME/lib64
[ -e "$reallib/libcufft.so.12" ] || reallib=$CUDA_HOME/targets/$(uname -m)-linux/lib
command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L
case $build in /*) ;; *) build=$root/$build ;; esac
mkdir -p "$build"
echo "== build ($build, CUDA_HOME=$CUDA_HOME)"
cmake -S . -B "$build" -DAPIGEN_BUILD_GENERATOR=OFF -DCMAKE_BUILD_TYPE=Release \
      -DCUDAToolkit_ROOT="$CUDA_HOME" > "$build/fftrand.configure.log" 2>&1 ||
    { cat "$build/fftrand.configure.log"; exit 1; }
cmake --build "$build" -j"$(nproc)" --target cudart_stub cufft_stub curand_stub \
      apigen-server-cuda-family cufft_roundtrip cufft_badinput curand_random curand_badinput curand_discrete \
      > "$build/fftrand.build.log" 2>&1 || { tail -n 50 "$build/fftrand.build.log"; exit 1; }
stub=$build/stub
server=$build/examples/cuda/apigen-server-cuda-family
[ -x "$server" ] && [ -e "$stub/libcufft.so.12" ] && [ -e "$stub/libcurand.so.10" ] ||
    { echo "fftrand.sh: no stubs or family server built"; exit 1; }
# only apigen's runtime, cuFFT and cuRAND in front of NVIDIA's libraries
only=$build/fftrand-only
mkdir -p "$only"
for f in libcudart.so.13 libcufft.so.12 libcurand.so.10 libapigen-guest.so.2; do
    ln -sf "$stub/$f" "$only/$f"
done
sh tests/cublas/parity.sh "$reallib/libcufft.so.12" "$stub/libcufft.so.12"
parity=$?
sh tests/cublas/parity.sh "$reallib/libcurand.so.10" "$stub/libcurand.so.10"
parity=$((parity + $?))

logs=$(mktemp -d "${TMPDIR:-/tmp}/apigen-fftrand.XXXXXX")
port=$(( 30000 + ($$ % 20000) ))
shmname=apigen-fftrand-$$
"$server" --listen "unix://$logs/fftrand.sock" --listen "tcp://127.0.0.1:$port" > "$logs/server.log" 2>&1 &
spid=$!
"$server" --listen "shm://$shmname" > "$logs/server-shm.log" 2>&1 &
spid2=$!
cleanup() {
    kill "$spid" "$spid2" 2>/dev/null; wait "$spid" "$spid2" 2>/dev/null
    if [ -n "${OUT:-}" ]; then mkdir -p "$OUT/fftrand-logs"; cp -r "$logs"/. "$OUT/fftrand-logs/"; fi
    [ "${KEEP:-0}" = 1 ] && echo "logs: $logs" || rm -rf "$logs"
}
trap cleanup EXIT INT TERM
i=0
while [ $i -lt 200 ] && ! { grep -q listening "$logs/server.log" && grep -q listening "$logs/server-shm.log"; } 2>/dev/null; do
    sleep 0.05; i=$((i + 1))
done
for p in "$spid" "$spid2"; do
    kill -0 "$p" 2>/dev/null || { echo "fftrand.sh: apigen-server-cuda-family did not start:"; cat "$logs"/server*.log; exit 1; }
done

url() {
    case $1 in
    unix) echo "unix://$logs/fftrand.sock" ;;
    tcp) echo "tcp://127.0.0.1:$port" ;;
    shm) echo "shm://$shmname" ;;
    esac
}
run() { # KEY MODE PROGRAM -> $logs/KEY.MODE.{out,err,rc}
    key=$1 mode=$2
    shift 2
    if [ "$mode" = native ]; then
        env LD_LIBRARY_PATH="$reallib" timeout 300 "$@" > "$logs/$key.$mode.out" 2> "$logs/$key.$mode.err"
    else
        env APIGEN_SERVER="$(url "$mode")" LD_LIBRARY_PATH="$only:$reallib" timeout 300 "$@" \
            > "$logs/$key.$mode.out" 2> "$logs/$key.$mode.err"
    fi
    echo $? > "$logs/$key.$mode.rc"
}
first_error() { # KEY MODE: the first line that says what went wrong
    { grep -m1 -iE "apigen|error|fail" "$logs/$1.$2.err"; grep -m1 -E "line [0-9]+:|NO\b" "$logs/$1.$2.out"; } 2>/dev/null | head -n 1 | cut -c1-150
}
fails=0
table=$logs/table.txt
printf '%-17s | %-8s | %-8s | %-8s | %-8s | %s\n' case native unix tcp shm result > "$table"
printf '%s\n' "------------------+----------+----------+----------+----------+-----------------" >> "$table"
cases="cufft/roundtrip curand/random curand/discrete"
for c in $cases; do
    key=$(echo "$c" | tr / _)
    run "$key" native "$build/examples/$c"
    for m in unix tcp shm; do run "$key" $m "$build/examples/$c"; done
    res=identical
    why=
    [ "$(cat "$logs/$key.native.rc")" = 0 ] || { res="NATIVE FAILED"; why="native: $(first_error "$key" native)"; }
    for m in unix tcp shm; do
        if [ "$(cat "$logs/$key.$m.rc")" != "$(cat "$logs/$key.native.rc")" ] ||
           ! cmp -s "$logs/$key.native.out" "$logs/$key.$m.out"; then
            res="DIFFERS"
            [ -z "$why" ] && why="$m: $(first_error "$key" $m)"
        fi
    done
    [ "$res" = identical ] || fails=$((fails + 1))
    printf '%-17s | rc %-5s | rc %-5s | rc %-5s | rc %-5s | %s %s\n' "$c" \
        "$(cat "$logs/$key.native.rc")" "$(cat "$logs/$key.unix.rc")" "$(cat "$logs/$key.tcp.rc")" \
        "$(cat "$logs/$key.shm.rc")" "$res" "$why" >> "$table"
done
for c in $cases; do
    key=$(echo "$c" | tr / _)
    printf '\n%s (native stdout):\n' "$c" >> "$table"
    sed 's/^/  /' "$logs/$key.native.out" >> "$table"
done

# bad input, forwarded over each transport: the committed expectations
for lib in cufft curand; do
    for m in unix tcp shm; do
        run "bad_$lib" $m "$build/examples/$lib/badinput"
        if [ "$(cat "$logs/bad_$lib.$m.rc")" = 0 ] &&
           cmp -s "tests/fftrand/${lib}_badinput.expected" "$logs/bad_$lib.$m.out"; then
            printf '\n%s bad input over %s: as expected\n' "$lib" "$m" >> "$table"
        else
            fails=$((fails + 1))
            printf '\n%s bad input over %s: DIFFERS (exit %s)\n' "$lib" "$m" "$(cat "$logs/bad_$lib.$m.rc")" >> "$table"
            diff -u "tests/fftrand/${lib}_badinput.expected" "$logs/bad_$lib.$m.out" | sed 's/^/  /' >> "$table"
        fi
    done
done
# another client's device memory (a second program holds it), each over
# its own server
for lib in cufft curand; do
    for m in unix tcp shm; do
        if sh tests/fftrand/foreign.sh "$server" "$only" "$reallib" "" $m \
              "tests/fftrand/${lib}_foreign.expected" "$build/examples/$lib/badinput" \
              > "$logs/foreign_$lib.$m.log" 2>&1; then
            printf '\n%s another client'"'"'s memory over %s: refused as expected\n' "$lib" "$m" >> "$table"
        else
            fails=$((fails + 1))
            printf '\n%s another client'"'"'s memory over %s: FAILED\n' "$lib" "$m" >> "$table"
            sed 's/^/  /' "$logs/foreign_$lib.$m.log" >> "$table"
        fi
    done
done
for p in "$spid" "$spid2"; do
    kill -0 "$p" 2>/dev/null || { fails=$((fails + 1)); printf '\nthe server is gone\n' >> "$table"; }
done

# a forwarded run loads no NVIDIA library (the stubs are all of CUDA there)
for c in $cases; do
    APIGEN_SERVER="$(url unix)" LD_LIBRARY_PATH="$only:$reallib" LD_DEBUG=files "$build/examples/$c" > /dev/null 2> "$logs/ld.err"
    nvlibs=$(grep -oE 'calling init: [^ ]+' "$logs/ld.err" | sed 's/calling init: //' |
             grep -E 'cuda|cufft|curand|nvidia' | sort -u)
    own=$(readlink -f "$stub")
    nvlibs=$(for f in $nvlibs; do readlink -f "$f"; done | sort -u)
    bad=$(for f in $nvlibs; do case $(readlink -f "$f") in "$own"/*) ;; *) echo "$f" ;; esac; done)
    if [ -n "$nvlibs" ] && [ -z "$bad" ]; then
        printf '\nforwarded %s: loads only apigen'"'"'s %s: ok\n' "$c" "$(echo $nvlibs | sed "s|$own/||g")" >> "$table"
    else
        fails=$((fails + 1))
        printf '\nforwarded %s: FAILED, NVIDIA libraries loaded: %s\n' "$c" "$(echo ${bad:-none, and not the stubs either})" >> "$table"
    fi
done
[ "$parity" = 0 ] || { fails=$((fails + 1)); printf '\nsymbol parity: FAILED (see above)\n' >> "$table"; }

echo
cat "$table"
echo "$fails case(s) differ"
if [ -n "${OUT:-}" ]; then mkdir -p "$OUT"; cp "$table" "$OUT/fftrand-table.txt"; fi
[ "$fails" = 0 ]
