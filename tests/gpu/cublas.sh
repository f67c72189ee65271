#!/bin/sh
# tests/gpu/cublas.sh: the cuBLAS stub (libcublas.so.13) on a machine with an
# NVIDIA GPU and the CUDA 13 toolkit. Builds the stub, apigen-server-cublas
# (over the toolkit's real libcublas.so.13) and the examples/cublas programs,
# starts the server (unix, tcp and shm, a process per session) and runs each
# example natively (NVIDIA's libcublas.so.13) and forwarded over each
# transport, comparing stdout and exit status:
#   - gemm: SGEMM with alpha/beta in host memory, then in device memory
#     (cublasSetPointerMode_v2), then host again; a workspace and
#     cudaStreamPerThread on the handle;
#   - batched: cublasSgemmBatched, its pointer arrays in device memory;
#   - reduce: cublasSdot/Isamax/Snrm2 results and cublasSrotg's scalars in
#     host and in device memory;
#   - gemm_runtime: SGEMM over cudaMalloc memory and a cudaStreamCreate
#     stream, here with NVIDIA's libcudart.so.13 in the guest and only
#     apigen-server-cublas: natively it must pass; forwarded it is refused
#     (CUBLAS_STATUS_NOT_INITIALIZED for the guest runtime's stream, or
#     CUBLAS_STATUS_INVALID_VALUE for its device pointers: neither is the
#     server's), and the table says so without counting it. With the
#     runtime's stub too and apigen-server-cuda-family it runs in one session:
#     tests/gpu/family-libs.sh.
# The examples use cuBLAS alone (legacy cublasAlloc/cublasFree for device
# memory, cublasSetMatrix/GetMatrix/SetVector/GetVector for copies), so the
# forwarded runs need no CUDA runtime in the guest. Each example also checks
# its results against the CPU and prints "yes"/"NO". Then the bad-input
# program forwarded (must print tests/cublas/badinput.expected), symbol
# parity with the toolkit's library, and a check that a forwarded run
# loaded no NVIDIA library (LD_DEBUG=files). Prints a table; results go to
# $OUT when it is set.
#
#   tests/gpu/cublas.sh            (from the repository root)
# Environment: BUILD (default build-gpu-cublas), KEEP=1 keeps the logs.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 1
build=${BUILD:-build-gpu-cublas}
if [ -z "${CUDA_HOME:-}" ]; then
    if command -v nvcc >/dev/null 2>&1; then CUDA_HOME=$(dirname "$(dirname "$(command -v nvcc)")")
    else CUDA_HOME=/usr/local/cuda; fi
fi
export CUDA_HOME PATH="$CUDA_HOME/bin:$PATH"
reallib=$CUDA_HOME/lib64
[ -e "$reallib/libcublas.so.13" ] || reallib=$CUDA_HOME/targets/$(uname -m)-linux/lib
command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L
case $build in /*) ;; *) build=$root/$build ;; esac
mkdir -p "$build"
echo "== build ($build, CUDA_HOME=$CUDA_HOME)"
cmake -S . -B "$build" -DAPIGEN_BUILD_GENERATOR=OFF -DCMAKE_BUILD_TYPE=Release \
      -DCUDAToolkit_ROOT="$CUDA_HOME" > "$build/cublas.configure.log" 2>&1 ||
    { cat "$build/cublas.configure.log"; exit 1; }
cmake --build "$build" -j"$(nproc)" --target cublas_stub apigen-server-cublas cublas_gemm \
      cublas_batched cublas_reduce cublas_badinput cublas_gemm_runtime > "$build/cublas.build.log" 2>&1 ||
    { tail -n 50 "$build/cublas.build.log"; exit 1; }
stub=$build/stub
server=$build/examples/cublas/apigen-server-cublas
ex=$build/examples/cublas
[ -x "$server" ] && [ -e "$stub/libcublas.so.13" ] || { echo "cublas.sh: no stub or server built"; exit 1; }
# only apigen's libcublas.so.13 in front of NVIDIA's libraries (build/stub may
# hold other stubs, libcudart.so.13 among them, from earlier builds)
only=$build/cublas-only
mkdir -p "$only"
ln -sf "$stub/libcublas.so.13" "$only/libcublas.so.13"
sh tests/cublas/parity.sh "$reallib/libcublas.so.13" "$stub/libcublas.so.13"
parity=$?

logs=$(mktemp -d "${TMPDIR:-/tmp}/apigen-cublas.XXXXXX")
port=$(( 30000 + ($$ % 20000) ))
shmname=apigen-cublas-$$
"$server" --listen "unix://$logs/cublas.sock" --listen "tcp://127.0.0.1:$port" > "$logs/server.log" 2>&1 &
spid=$!
"$server" --listen "shm://$shmname" > "$logs/server-shm.log" 2>&1 &
spid2=$!
cleanup() {
    kill "$spid" "$spid2" 2>/dev/null; wait "$spid" "$spid2" 2>/dev/null
    if [ -n "${OUT:-}" ]; then mkdir -p "$OUT/cublas-logs"; cp -r "$logs"/. "$OUT/cublas-logs/"; fi
    [ "${KEEP:-0}" = 1 ] && echo "logs: $logs" || rm -rf "$logs"
}
trap cleanup EXIT INT TERM
i=0
while [ $i -lt 100 ] && ! { grep -q listening "$logs/server.log" && grep -q listening "$logs/server-shm.log"; } 2>/dev/null; do
    sleep 0.05; i=$((i + 1))
done
for p in "$spid" "$spid2"; do
    kill -0 "$p" 2>/dev/null || { echo "cublas.sh: apigen-server-cublas did not start:"; cat "$logs"/server*.log; exit 1; }
done

url() {
    case $1 in
    unix) echo "unix://$logs/cublas.sock" ;;
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
    { grep -m1 -iE "apigen|error|fail" "$logs/$1.$2.err"; grep -m1 -E "CUBLAS_STATUS|NO\b" "$logs/$1.$2.out"; } 2>/dev/null | head -n 1 | cut -c1-150
}
# gemm_runtime without the runtime's stub: the runtime's stream or its
# cudaMalloc memory refused (the stream comes first: NOT_INITIALIZED, the
# spec's invalid_handle answer; the memory: INVALID_VALUE)
refused() { grep -qE "CUBLAS_STATUS_(INVALID_VALUE|NOT_INITIALIZED)" "$1"; }
fails=0
table=$logs/table.txt
printf '%-12s | %-8s | %-8s | %-8s | %-8s | %s\n' case native unix tcp shm result > "$table"
printf '%s\n' "-------------+----------+----------+----------+----------+-----------------" >> "$table"
for e in gemm batched reduce gemm_runtime; do
    run "$e" native "$ex/$e"
    for m in unix tcp shm; do run "$e" $m "$ex/$e"; done
    res=identical
    why=
    [ "$(cat "$logs/$e.native.rc")" = 0 ] || { res="NATIVE FAILED"; why="native: $(first_error "$e" native)"; }
    for m in unix tcp shm; do
        if [ "$(cat "$logs/$e.$m.rc")" != "$(cat "$logs/$e.native.rc")" ] ||
           ! cmp -s "$logs/$e.native.out" "$logs/$e.$m.out"; then
            res="DIFFERS"
            [ -z "$why" ] && why="$m: $(first_error "$e" $m)"
        fi
    done
    if [ "$e" = gemm_runtime ] && [ "$res" = DIFFERS ] && [ "$(cat "$logs/$e.native.rc")" = 0 ] &&
       refused "$logs/$e.unix.out" && refused "$logs/$e.tcp.out" && refused "$logs/$e.shm.out"; then
        res="needs the family"
        why="(cudaMalloc memory refused without the runtime's stub: tests/gpu/family-libs.sh runs it)"
    fi
    case $res in identical|"needs the family") ;; *) fails=$((fails + 1)) ;; esac
    printf '%-12s | rc %-5s | rc %-5s | rc %-5s | rc %-5s | %s %s\n' "$e" \
        "$(cat "$logs/$e.native.rc")" "$(cat "$logs/$e.unix.rc")" "$(cat "$logs/$e.tcp.rc")" \
        "$(cat "$logs/$e.shm.rc")" "$res" "$why" >> "$table"
done
for e in gemm batched reduce gemm_runtime; do
    printf '\n%s (native stdout):\n' "$e" >> "$table"
    sed 's/^/  /' "$logs/$e.native.out" >> "$table"
done

# bad input, forwarded over each transport: the committed expectations
for m in unix tcp shm; do
    run bad $m "$ex/badinput"
    if [ "$(cat "$logs/bad.$m.rc")" = 0 ] && cmp -s tests/cublas/badinput.expected "$logs/bad.$m.out"; then
        printf '\nbad input over %s: as expected\n' "$m" >> "$table"
    else
        fails=$((fails + 1))
        printf '\nbad input over %s: DIFFERS (exit %s)\n' "$m" "$(cat "$logs/bad.$m.rc")" >> "$table"
        diff -u tests/cublas/badinput.expected "$logs/bad.$m.out" | sed 's/^/  /' >> "$table"
    fi
done

# a forwarded run loads no NVIDIA library (the stub is all of cuBLAS there)
APIGEN_SERVER="$(url unix)" LD_LIBRARY_PATH="$only:$reallib" LD_DEBUG=files "$ex/gemm" > /dev/null 2> "$logs/ld.err"
nvlibs=$(grep -oE 'calling init: [^ ]+' "$logs/ld.err" | sed 's/calling init: //' |
         grep -E 'cuda|cublas|nvidia' | sort -u)
own=$(readlink -f "$stub")
nvlibs=$(for f in $nvlibs; do readlink -f "$f"; done | sort -u)
bad=$(for f in $nvlibs; do case $(readlink -f "$f") in "$own"/*) ;; *) echo "$f" ;; esac; done)
if [ -n "$nvlibs" ] && [ -z "$bad" ]; then
    printf '\nforwarded guest: loads only apigen'"'"'s %s: ok\n' "$(echo $nvlibs)" >> "$table"
else
    fails=$((fails + 1))
    printf '\nforwarded guest: FAILED, NVIDIA libraries loaded: %s\n' "$(echo ${bad:-none, and not the stub either})" >> "$table"
fi
[ "$parity" = 0 ] || { fails=$((fails + 1)); printf '\nsymbol parity: FAILED (see above)\n' >> "$table"; }

echo
cat "$table"
echo "$fails case(s) differ"
if [ -n "${OUT:-}" ]; then mkdir -p "$OUT"; cp "$table" "$OUT/cublas-table.txt"; fi
[ "$fails" = 0 ]
