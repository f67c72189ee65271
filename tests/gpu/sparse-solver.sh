#!/bin/sh
# tests/gpu/sparse-solver.sh: the cuSPARSE and cuSOLVER stubs
# (libcusparse.so.12, libcusolver.so.12) on a machine with an NVIDIA GPU and
# the CUDA 13 toolkit, as members of the CUDA family: the programs use the
# CUDA runtime (cudaMalloc, cudaMemcpy, cudaStreamCreate) and the library,
# and forwarded they load apigen's libcudart.so.13, libcusparse.so.12 and
# libcusolver.so.12, which share one session of apigen-server-cuda-family
# (a cudaMalloc pointer and a cudaStream_t are the library's too). Builds the
# stubs, the family server and examples/cusparse, examples/cusolver, starts
# the server (unix, tcp and shm) and runs each example natively (NVIDIA's
# libraries) and forwarded over each transport, comparing stdout and exit
# status:
#   - spmv: CSR SpMV with the generic API, bufferSize then a workspace,
#     alpha/beta in host then device memory (pointer mode), the runtime's
#     stream on the handle, descriptors handing back their device addresses,
#     then cusparseAxpby (scalars of the vectors' value type) in both modes;
#   - spgemm: C = alpha A B for CSR A and B (SpGEMM: workEstimation and
#     compute, each with its size query then a workspace, SpMatGetSize,
#     CsrSetPointers, SpGEMM_copy);
#   - lu: getrf + getrs (32-bit API, Lwork workspace, devInfo on the device)
#     and Xgetrf + Xgetrs (64-bit API, cusolverDnParams_t, device and host
#     workspaces);
#   - cholesky: potrf + potrs, and devInfo of a matrix that is not positive
#     definite.
# Each checks its results against the CPU ("yes"/"NO"). Then the bad-input
# programs forwarded (must exit 0: every case failed cleanly, and the server
# still runs; their lines are printed), symbol parity with the toolkit's
# libraries, and a check that a forwarded run loaded no NVIDIA library
# (LD_DEBUG=files). Prints a table; results go to $OUT when it is set.
#
#   sh tests/gpu/sparse-solver.sh            (from the repository root)
# Environment: BUILD (default build-gpu-sparse), KEEP=1 keeps the logs,
# NOBUILD=1 uses BUILD as it is (configured and built before).
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 1
build=${BUILD:-build-gpu-sparse}
if [ -z "${CUDA_HOME:-}" ]; then
    if command -v nvcc >/dev/null 2>&1; then CUDA_HOME=$(dirname "$(dirname "$(command -v nvcc)")")
    else CUDA_HOME=/usr/local/cuda; fi
fi
export CUDA_HOME PATH="$CUDA_HOME/bin:$PATH"
reallib=$CUDA_HOME/lib64
[ -e "$reallib/libcusparse.so.12" ] || reallib=$CUDA_HOME/targets/$(uname -m)-linux/lib
command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L
case $build in /*) ;; *) build=$root/$build ;; esac
mkdir -p "$build"
if [ "${NOBUILD:-0}" != 1 ]; then
echo "== build ($build, CUDA_HOME=$CUDA_HOME)"
cmake -S . -B "$build" -DAPIGEN_BUILD_GENERATOR=OFF -DCMAKE_BUILD_TYPE=Release \
      -DCUDAToolkit_ROOT="$CUDA_HOME" > "$build/sparse.configure.log" 2>&1 ||
    { cat "$build/sparse.configure.log"; exit 1; }
cmake --build "$build" -j"$(nproc)" --target cuda_stub cudart_stub cusparse_stub cusolver_stub \
      apigen-server-cuda-family cusparse_spmv cusparse_spgemm cusparse_badinput cusolver_lu cusolver_cholesky \
      cusolver_badinput > "$build/sparse.build.log" 2>&1 ||
    { tail -n 50 "$build/sparse.build.log"; exit 1; }
fi
stub=$build/stub
server=$build/examples/cuda/apigen-server-cuda-family
[ -x "$server" ] && [ -e "$stub/libcusparse.so.12" ] && [ -e "$stub/libcusolver.so.12" ] ||
    { echo "sparse-solver.sh: no stubs or server built"; exit 1; }
parity=0
sh tests/cublas/parity.sh "$reallib/libcusparse.so.12" "$stub/libcusparse.so.12" || parity=1
sh tests/cublas/parity.sh "$reallib/libcusolver.so.12" "$stub/libcusolver.so.12" || parity=1

logs=$(mktemp -d "${TMPDIR:-/tmp}/apigen-sparse.XXXXXX")
port=$(( 30000 + ($$ % 20000) ))
shmname=apigen-sparse-$$
"$server" --listen "unix://$logs/s.sock" --listen "tcp://127.0.0.1:$port" > "$logs/server.log" 2>&1 &
spid=$!
"$server" --listen "shm://$shmname" > "$logs/server-shm.log" 2>&1 &
spid2=$!
cleanup() {
    kill "$spid" "$spid2" 2>/dev/null; wait "$spid" "$spid2" 2>/dev/null
    if [ -n "${OUT:-}" ]; then mkdir -p "$OUT/sparse-logs"; cp -r "$logs"/. "$OUT/sparse-logs/"; fi
    [ "${KEEP:-0}" = 1 ] && echo "logs: $logs" || rm -rf "$logs"
}
trap cleanup EXIT INT TERM
i=0
while [ $i -lt 200 ] && ! { grep -q listening "$logs/server.log" && grep -q listening "$logs/server-shm.log"; } 2>/dev/null; do
    sleep 0.05; i=$((i + 1))
done
for p in "$spid" "$spid2"; do
    kill -0 "$p" 2>/dev/null || { echo "sparse-solver.sh: the family server did not start:"; cat "$logs"/server*.log; exit 1; }
done

url() {
    case $1 in
    unix) echo "unix://$logs/s.sock" ;;
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
        env APIGEN_SERVER="$(url "$mode")" LD_LIBRARY_PATH="$stub" timeout 300 "$@" \
            > "$logs/$key.$mode.out" 2> "$logs/$key.$mode.err"
    fi
    echo $? > "$logs/$key.$mode.rc"
}
first_error() { # KEY MODE: the first line that says what went wrong
    { grep -m1 -iE "apigen|error|fail" "$logs/$1.$2.err"; grep -m1 -E "STATUS|status|line [0-9]|NO\b" "$logs/$1.$2.out"; } 2>/dev/null | head -n 1 | cut -c1-150
}
fails=0
table=$logs/table.txt
examples="cusparse/spmv cusparse/spgemm cusolver/lu cusolver/cholesky"
printf '%-18s | %-8s | %-8s | %-8s | %-8s | %s\n' case native unix tcp shm result > "$table"
printf '%s\n' "-------------------+----------+----------+----------+----------+-----------------" >> "$table"
for e in $examples; do
    k=$(echo "$e" | tr / .)
    run "$k" native "$build/examples/$e"
    for m in unix tcp shm; do run "$k" $m "$build/examples/$e"; done
    res=identical
    why=
    [ "$(cat "$logs/$k.native.rc")" = 0 ] || { res="NATIVE FAILED"; why="native: $(first_error "$k" native)"; }
    for m in unix tcp shm; do
        if [ "$(cat "$logs/$k.$m.rc")" != "$(cat "$logs/$k.native.rc")" ] ||
           ! cmp -s "$logs/$k.native.out" "$logs/$k.$m.out"; then
            res="DIFFERS"
            [ -z "$why" ] && why="$m: $(first_error "$k" $m)"
        fi
    done
    [ "$res" = identical ] || fails=$((fails + 1))
    printf '%-18s | rc %-5s | rc %-5s | rc %-5s | rc %-5s | %s %s\n' "$e" \
        "$(cat "$logs/$k.native.rc")" "$(cat "$logs/$k.unix.rc")" "$(cat "$logs/$k.tcp.rc")" \
        "$(cat "$logs/$k.shm.rc")" "$res" "$why" >> "$table"
done
for e in $examples; do
    k=$(echo "$e" | tr / .)
    printf '\n%s (native stdout):\n' "$e" >> "$table"
    sed 's/^/  /' "$logs/$k.native.out" >> "$table"
    for m in unix tcp shm; do
        cmp -s "$logs/$k.native.out" "$logs/$k.$m.out" && continue
        printf '%s over %s (stdout, stderr):\n' "$e" "$m" >> "$table"
        sed 's/^/  /' "$logs/$k.$m.out" "$logs/$k.$m.err" | head -n 40 >> "$table"
    done
done

# bad input, forwarded over each transport: every case an error, no crash
for lib in cusparse cusolver; do
    for m in unix tcp shm; do
        run "bad.$lib" $m "$build/examples/$lib/badinput"
        if [ "$(cat "$logs/bad.$lib.$m.rc")" = 0 ] && kill -0 "$spid" 2>/dev/null && kill -0 "$spid2" 2>/dev/null; then
            printf '\n%s bad input over %s: every case failed cleanly\n' "$lib" "$m" >> "$table"
        else
            fails=$((fails + 1))
            printf '\n%s bad input over %s: FAILED (exit %s)\n' "$lib" "$m" "$(cat "$logs/bad.$lib.$m.rc")" >> "$table"
            sed 's/^/  /' "$logs/bad.$lib.$m.err" | head -n 20 >> "$table"
        fi
        [ "$m" = unix ] && sed 's/^/  /' "$logs/bad.$lib.$m.out" >> "$table"
        cmp -s "$logs/bad.$lib.unix.out" "$logs/bad.$lib.$m.out" ||
            printf '  (over %s the lines differ from unix)\n' "$m" >> "$table"
    done
done

# a forwarded run loads no NVIDIA library (the stubs are all of CUDA there)
for e in cusparse/spmv cusolver/lu; do
    APIGEN_SERVER="$(url unix)" LD_LIBRARY_PATH="$stub" LD_DEBUG=files "$build/examples/$e" > /dev/null 2> "$logs/ld.err"
    libs=$(grep -oE 'calling init: [^ ]+' "$logs/ld.err" | sed 's/calling init: //' |
           grep -E 'cuda|cusparse|cusolver|cublas|nvidia|nvJit' | sort -u)
    own=$(readlink -f "$stub")
    libs=$(for f in $libs; do readlink -f "$f"; done | sort -u)
    bad=$(for f in $libs; do case $f in "$own"/*) ;; *) echo "$f" ;; esac; done)
    if [ -n "$libs" ] && [ -z "$bad" ]; then
        printf '\nforwarded %s: loads only apigen'"'"'s %s: ok\n' "$e" "$(echo $libs | sed "s|$own/||g")" >> "$table"
    else
        fails=$((fails + 1))
        printf '\nforwarded %s: FAILED, NVIDIA libraries loaded: %s\n' "$e" "$(echo ${bad:-none, and not the stubs either})" >> "$table"
    fi
done
[ "$parity" = 0 ] || { fails=$((fails + 1)); printf '\nsymbol parity: FAILED (see above)\n' >> "$table"; }

echo
cat "$table"
echo "$fails case(s) differ"
if [ -n "${OUT:-}" ]; then mkdir -p "$OUT"; cp "$table" "$OUT/sparse-solver-table.txt"; fi
[ "$fails" = 0 ]
