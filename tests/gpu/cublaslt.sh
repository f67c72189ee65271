#!/bin/sh
# tests/gpu/cublaslt.sh: the cuBLASLt stub (libcublasLt.so.13, api.family:
# cuda) on a machine with an NVIDIA GPU and the CUDA 13 toolkit. Builds the
# runtime's and cuBLASLt's stubs, apigen-server-cuda-family (the driver, the
# runtime and cuBLASLt in one server, over NVIDIA's libraries) and the
# examples/cublasLt programs, starts the server (unix, tcp and shm, a
# process per session) and runs each example natively (NVIDIA's
# libcudart.so.13 and libcublasLt.so.13) and forwarded over each transport
# (apigen's two stubs in front: cudaMalloc memory and a cudaStreamCreate
# stream are the same objects in cuBLASLt's calls), comparing stdout and
# exit status:
#   - matmul: a matmul descriptor with a bias epilogue, matrix layouts, a
#     preference with a workspace limit, the heuristic's best algorithm and
#     its workspace on a runtime stream; alpha/beta in host memory, then in
#     device memory (CUBLASLT_MATMUL_DESC_POINTER_MODE), then A transposed
#     with a GELU+bias epilogue and no algorithm; every D checked against
#     the CPU ("yes"/"NO"); an attribute size query (sizeInBytes 0) and a
#     device pointer attribute read back.
#   - step_loop (tests/cublasLt/step_loop.c): PyTorch's gemm_and_bias 40
#     times, descriptors created and destroyed queued.
#   - memo_loop (tests/cublasLt/memo_loop.c): the heuristic asked again
#     about descriptors that hold the same values, and about changed ones
#     (specs/cublasLt.yaml `cache: {contents:}`): NVIDIA's answers must be
#     the same natively, forwarded and forwarded with APIGEN_CACHE=0; the
#     guest's trace of a tcp run must hold one round trip of the heuristic
#     per distinct question ("questions: N" on its stderr; plus at most one
#     in 16 of the rest, asked again while calls are queued), and with
#     APIGEN_CACHE=0 one per call (the table's "memo" line: before/after).
# Then the bad-input program forwarded (must print
# tests/cublasLt/badinput.expected: forged descriptors, a workspace and a
# bias pointer never allocated, a workspace past its allocation, another
# client's cudaMalloc memory as the workspace, attribute
# buffers of the wrong size), symbol parity with the toolkit's library, the
# server's trace of one forwarded run (one session for both APIs), and a
# check that a forwarded run loaded no NVIDIA library (LD_DEBUG=files).
# Prints a table; results go to $OUT when it is set.
#
#   sh tests/gpu/cublaslt.sh            (from the repository root)
# Environment: BUILD (default build-gpu-cublaslt), KEEP=1 keeps the logs.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 1
build=${BUILD:-build-gpu-cublaslt}
if [ -z "${CUDA_HOME:-}" ]; then
    if command -v nvcc >/dev/null 2>&1; then CUDA_HOME=$(dirname "$(dirname "$(command -v nvcc)")")
    else CUDA_HOME=/usr/local/cuda; fi
fi
export CUDA_HOME PATH="$CUDA_HOME/bin:$PATH"
reallib=$CUDA_HOME/lib64
[ -e "$reallib/libcublasLt.so.13" ] || reallib=$CUDA_HOME/targets/$(uname -m)-linux/lib
command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L
case $build in /*) ;; *) build=$root/$build ;; esac
mkdir -p "$build"
echo "== build ($build, CUDA_HOME=$CUDA_HOME)"
cmake -S . -B "$build" -DAPIGEN_BUILD_GENERATOR=OFF -DCMAKE_BUILD_TYPE=Release \
      -DCUDAToolkit_ROOT="$CUDA_HOME" > "$build/cublaslt.configure.log" 2>&1 ||
    { cat "$build/cublaslt.configure.log"; exit 1; }
cmake --build "$build" -j"$(nproc)" --target cublasLt_stub cudart_stub apigen-server-cuda-family \
      cublasLt_matmul cublasLt_badinput cublasLt_step_loop cublasLt_memo_loop > "$build/cublaslt.build.log" 2>&1 ||
    { tail -n 50 "$build/cublaslt.build.log"; exit 1; }
stub=$build/stub
server=$build/examples/cuda/apigen-server-cuda-family
ex=$build/examples/cublasLt
[ -x "$server" ] && [ -e "$stub/libcublasLt.so.13" ] && [ -e "$stub/libcudart.so.13" ] ||
    { echo "cublaslt.sh: no stubs or family server built"; exit 1; }
# only apigen's libcudart.so.13 and libcublasLt.so.13 in front of NVIDIA's
# libraries (build/stub may hold other stubs from earlier builds)
only=$build/cublaslt-only
mkdir -p "$only"
ln -sf "$stub/libcublasLt.so.13" "$only/libcublasLt.so.13"
ln -sf "$stub/libcudart.so.13" "$only/libcudart.so.13"
sh tests/cublasLt/parity.sh "$reallib/libcublasLt.so.13" "$stub/libcublasLt.so.13"
parity=$?

logs=$(mktemp -d "${TMPDIR:-/tmp}/apigen-cublaslt.XXXXXX")
port=$(( 30000 + ($$ % 20000) ))
shmname=apigen-cublaslt-$$
APIGEN_TRACE=1 "$server" --listen "unix://$logs/lt.sock" --listen "tcp://127.0.0.1:$port" > "$logs/server.log" 2>&1 &
spid=$!
"$server" --listen "shm://$shmname" > "$logs/server-shm.log" 2>&1 &
spid2=$!
cleanup() {
    kill "$spid" "$spid2" 2>/dev/null; wait "$spid" "$spid2" 2>/dev/null
    if [ -n "${OUT:-}" ]; then mkdir -p "$OUT/cublaslt-logs"; cp -r "$logs"/. "$OUT/cublaslt-logs/"; fi
    [ "${KEEP:-0}" = 1 ] && echo "logs: $logs" || rm -rf "$logs"
}
trap cleanup EXIT INT TERM
i=0
while [ $i -lt 100 ] && ! { grep -q listening "$logs/server.log" && grep -q listening "$logs/server-shm.log"; } 2>/dev/null; do
    sleep 0.05; i=$((i + 1))
done
for p in "$spid" "$spid2"; do
    kill -0 "$p" 2>/dev/null || { echo "cublaslt.sh: apigen-server-cuda-family did not start:"; cat "$logs"/server*.log; exit 1; }
done

url() {
    case $1 in
    unix) echo "unix://$logs/lt.sock" ;;
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
    { grep -m1 -iE "apigen|error|fail" "$logs/$1.$2.err"; grep -m1 -E "CUBLAS_STATUS|cuda[A-Z]|NO\b" "$logs/$1.$2.out"; } 2>/dev/null | head -n 1 | cut -c1-150
}
fails=0
table=$logs/table.txt
printf '%-12s | %-8s | %-8s | %-8s | %-8s | %s\n' case native unix tcp shm result > "$table"
printf '%s\n' "-------------+----------+----------+----------+----------+-----------------" >> "$table"
# step_loop (tests/cublasLt/step_loop.c): PyTorch's gemm_and_bias 40 times,
# its descriptors created and destroyed queued
prog() { case $1 in step_loop|memo_loop) echo "$build/tests/cublasLt/cublasLt_$1" ;; *) echo "$ex/$1" ;; esac; }
for e in matmul step_loop memo_loop; do
    run "$e" native "$(prog "$e")"
    for m in unix tcp shm; do run "$e" $m "$(prog "$e")"; done
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
    [ "$res" = identical ] || fails=$((fails + 1))
    printf '%-12s | rc %-5s | rc %-5s | rc %-5s | rc %-5s | %s %s\n' "$e" \
        "$(cat "$logs/$e.native.rc")" "$(cat "$logs/$e.unix.rc")" "$(cat "$logs/$e.tcp.rc")" \
        "$(cat "$logs/$e.shm.rc")" "$res" "$why" >> "$table"
done
for e in matmul step_loop memo_loop; do
    printf '\n%s (native stdout):\n' "$e" >> "$table"
    sed 's/^/  /' "$logs/$e.native.out" >> "$table"
done

# memo_loop's heuristic round trips over tcp: kept answers, then APIGEN_CACHE=0
fn=cublasLtMatmulAlgoGetHeuristic
for c in 1 0; do
    env APIGEN_CACHE=$c APIGEN_TRACE="$logs/memo.trace$c" APIGEN_SERVER="$(url tcp)" \
        LD_LIBRARY_PATH="$only:$reallib" timeout 300 "$(prog memo_loop)" > "$logs/memo.c$c.out" 2> "$logs/memo.c$c.err"
    echo $? > "$logs/memo.c$c.rc"
done
q=$(sed -n 's/^questions: //p' "$logs/memo.c1.err")
calls=$(sed -n 's/^calls: //p' "$logs/memo.c1.err")
calls0=$(sed -n 's/^calls: //p' "$logs/memo.c0.err")
rt1=$(grep -c "apigen wire \[[0-9]*\]: rt $fn " "$logs/memo.trace1" 2>/dev/null)
rt0=$(grep -c "apigen wire \[[0-9]*\]: rt $fn " "$logs/memo.trace0" 2>/dev/null)
if [ "$(cat "$logs/memo.c1.rc")" = 0 ] && [ "$(cat "$logs/memo.c0.rc")" = 0 ] &&
   cmp -s "$logs/memo_loop.native.out" "$logs/memo.c1.out" && cmp -s "$logs/memo_loop.native.out" "$logs/memo.c0.out" &&
   [ -n "$q" ] && [ "$rt1" -ge "$q" ] && [ "$rt1" -le $((q + (calls + 15) / 16)) ] && [ "$rt0" = "$calls0" ]; then
    printf '\nmemo: %s heuristic calls over tcp, %s round trips (APIGEN_CACHE=0: %s calls, %s round trips), the native answers: ok\n' \
        "$calls" "$rt1" "$calls0" "$rt0" >> "$table"
else
    fails=$((fails + 1))
    printf '\nmemo: FAILED: %s calls, %s round trips for %s questions (APIGEN_CACHE=0: %s), exit %s/%s, answers %s\n' \
        "${calls:-?}" "$rt1" "${q:-?}" "$rt0" "$(cat "$logs/memo.c1.rc")" "$(cat "$logs/memo.c0.rc")" \
        "$(cmp -s "$logs/memo_loop.native.out" "$logs/memo.c1.out" && echo native || echo DIFFER)" >> "$table"
fi

# one session for the runtime and cuBLASLt (the unix/tcp server traces)
sleep 0.5
sessions=$(grep -c "server: [a-zA-Z]* new session" "$logs/server.log")
if grep -q "server: cublasLt joined the session of cudart\|server: cudart joined the session of cublasLt" "$logs/server.log" &&
   grep -q "server: cublasLt\.apigenCublasLtMatmul " "$logs/server.log"; then
    printf '\nfamily: cuBLASLt joined the runtime'"'"'s session in each of the %s forwarded runs traced: ok\n' "$sessions" >> "$table"
else
    fails=$((fails + 1))
    printf '\nfamily: FAILED, cuBLASLt did not join the runtime'"'"'s session (or no matmul reached the server)\n' >> "$table"
fi

# bad input, forwarded over each transport: the committed expectations
for m in unix tcp shm; do
    run bad $m "$ex/badinput"
    if [ "$(cat "$logs/bad.$m.rc")" = 0 ] && cmp -s tests/cublasLt/badinput.expected "$logs/bad.$m.out"; then
        printf '\nbad input over %s: as expected\n' "$m" >> "$table"
    else
        fails=$((fails + 1))
        printf '\nbad input over %s: DIFFERS (exit %s)\n' "$m" "$(cat "$logs/bad.$m.rc")" >> "$table"
        diff -u tests/cublasLt/badinput.expected "$logs/bad.$m.out" | sed 's/^/  /' >> "$table"
    fi
done

# a forwarded run loads no NVIDIA library (the stubs are all of CUDA there)
APIGEN_SERVER="$(url unix)" LD_LIBRARY_PATH="$only:$reallib" LD_DEBUG=files "$ex/matmul" > /dev/null 2> "$logs/ld.err"
nvlibs=$(grep -oE 'calling init: [^ ]+' "$logs/ld.err" | sed 's/calling init: //' |
         grep -E 'cuda|cublas|nvidia' | sort -u)
own=$(readlink -f "$stub")
nvlibs=$(for f in $nvlibs; do readlink -f "$f"; done | sort -u)
bad=$(for f in $nvlibs; do case $(readlink -f "$f") in "$own"/*) ;; *) echo "$f" ;; esac; done)
if [ -n "$nvlibs" ] && [ -z "$bad" ]; then
    printf '\nforwarded guest: loads only apigen'"'"'s %s: ok\n' "$(echo $nvlibs)" >> "$table"
else
    fails=$((fails + 1))
    printf '\nforwarded guest: FAILED, NVIDIA libraries loaded: %s\n' "$(echo ${bad:-none, and not the stubs either})" >> "$table"
fi
[ "$parity" = 0 ] || { fails=$((fails + 1)); printf '\nsymbol parity: FAILED (see above)\n' >> "$table"; }

echo
cat "$table"
echo "$fails case(s) differ"
if [ -n "${OUT:-}" ]; then mkdir -p "$OUT"; cp "$table" "$OUT/cublaslt-table.txt"; fi
[ "$fails" = 0 ]
