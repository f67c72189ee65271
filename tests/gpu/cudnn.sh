#!/bin/sh
# tests/gpu/cudnn.sh: the cuDNN 9 stubs (libcudnn.so.9 and its sub-library
# stubs) on a machine with an NVIDIA GPU and the CUDA 13 toolkit. Builds the
# stubs, the CUDA runtime's stub and apigen-server-cuda-family (driver,
# runtime and cuDNN in one server: one session per process, so cudaMalloc
# pointers and cudaStreamCreate streams are cuDNN's arguments), starts it
# (unix and tcp in one server, shm in another; a process per session), and
# runs each examples/cudnn program natively (NVIDIA's libcudnn.so.9 and
# libcudart.so.13) and forwarded over each transport, comparing stdout and
# exit status:
#   - conv: the legacy API: tensor/filter/convolution descriptors, the
#     algorithms cuDNN ranks (perf result arrays), workspaces, a stream on
#     the handle; forward, backward data and backward filter against a CPU
#     reference;
#   - layers: ReLU forward and backward, max pooling, softmax over channels,
#     batch normalization forward (training: statistics, running averages,
#     saved mean and inverse variance; inference) against the CPU;
#   - backend_conv: the backend (graph) API: a convolution graph, the
#     heuristics' engine configurations filled into descriptors the program
#     created, an execution plan, a variant pack of device pointers and a
#     workspace, executed; against a CPU reference;
#   - sublibs: libcudnn_graph/ops/cnn/adv.so.9 dlopen'ed by name and their
#     functions called, objects mixed across them;
#   - step_loop (tests/cudnn/step_loop.c): what a PyTorch training step asks
#     per convolution and batch norm, 40 times, with its descriptors created,
#     set, finalized and destroyed queued; against the CPU.
# Then the bad-input program forwarded (tests/cudnn/badinput.expected: the
# status class of each case; on NVIDIA's library a case may answer another
# class than the CI fake does: the table shows the difference), symbol
# parity of every stub with the cuDNN in use, and a check that a forwarded
# run loaded no NVIDIA library. Prints a table; results go to $OUT when set.
#
#   sh tests/gpu/cudnn.sh          (from the repository root)
# Environment: BUILD (default build-gpu-cudnn), KEEP=1 keeps the logs,
# APIGEN_CUDNN_ROOT: the cuDNN to use (a folder with include/cudnn.h and
# lib/libcudnn.so.9); default: the toolkit's if it has cuDNN 9, else the one
# of the machine's PyTorch (the nvidia-cudnn wheel).
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 1
build=${BUILD:-build-gpu-cudnn}
if [ -z "${CUDA_HOME:-}" ]; then
    if command -v nvcc >/dev/null 2>&1; then CUDA_HOME=$(dirname "$(dirname "$(command -v nvcc)")")
    else CUDA_HOME=/usr/local/cuda; fi
fi
export CUDA_HOME PATH="$CUDA_HOME/bin:$PATH"
reallib=$CUDA_HOME/lib64
[ -e "$reallib/libcudart.so.13" ] || reallib=$CUDA_HOME/targets/$(uname -m)-linux/lib
cudnn=${APIGEN_CUDNN_ROOT:-}
if [ -z "$cudnn" ]; then
    for d in "$CUDA_HOME/lib" "$CUDA_HOME/lib64" "$reallib"; do
        if [ -e "$d/libcudnn.so.9" ] && [ -e "$CUDA_HOME/include/cudnn.h" ]; then cudnn=$CUDA_HOME; break; fi
    done
fi
if [ -z "$cudnn" ]; then
    cudnn=$(python3 -c 'import os, nvidia.cudnn as m; print(os.path.dirname(m.__file__) if m.__file__ else list(m.__path__)[0])' 2>/dev/null)
fi
[ -n "$cudnn" ] && [ -e "$cudnn/include/cudnn.h" ] || { echo "cudnn.sh: no cuDNN 9 found (set APIGEN_CUDNN_ROOT)"; exit 1; }
cudnnlib=$cudnn/lib
[ -e "$cudnnlib/libcudnn.so.9" ] || cudnnlib=$cudnn/lib64
echo "cuDNN: $cudnn ($(sed -n 's/^#define CUDNN_\(MAJOR\|MINOR\|PATCHLEVEL\) \([0-9]*\).*/\2/p' "$cudnn/include/cudnn_version.h" | paste -sd.))"
command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L
case $build in /*) ;; *) build=$root/$build ;; esac
mkdir -p "$build"
echo "== build ($build, CUDA_HOME=$CUDA_HOME)"
cmake -S . -B "$build" -DAPIGEN_BUILD_GENERATOR=OFF -DCMAKE_BUILD_TYPE=Release \
      -DCUDAToolkit_ROOT="$CUDA_HOME" -DAPIGEN_CUDNN_ROOT="$cudnn" > "$build/cudnn.configure.log" 2>&1 ||
    { cat "$build/cudnn.configure.log"; exit 1; }
cmake --build "$build" -j"$(nproc)" --target cudnn_stub cudart_stub apigen-server-cuda-family \
      cudnn_graph_stub cudnn_ops_stub cudnn_cnn_stub cudnn_adv_stub cudnn_engines_precompiled_stub \
      cudnn_engines_runtime_compiled_stub cudnn_heuristic_stub \
      cudnn_conv cudnn_layers cudnn_backend_conv cudnn_sublibs cudnn_badinput cudnn_step_loop > "$build/cudnn.build.log" 2>&1 ||
    { tail -n 50 "$build/cudnn.build.log"; exit 1; }
stub=$build/stub
server=$build/examples/cuda/apigen-server-cuda-family
ex=$build/examples/cudnn
[ -x "$server" ] && [ -e "$stub/libcudnn.so.9" ] || { echo "cudnn.sh: no stub or family server built"; exit 1; }
sh tests/cudnn/parity.sh "$cudnnlib" "$stub" specs/cudnn/symbols
parity=$?

logs=$(mktemp -d "${TMPDIR:-/tmp}/apigen-cudnn.XXXXXX")
port=$(( 30000 + ($$ % 20000) ))
shmname=apigen-cudnn-$$
"$server" --listen "unix://$logs/cudnn.sock" --listen "tcp://127.0.0.1:$port" > "$logs/server.log" 2>&1 &
spid=$!
"$server" --listen "shm://$shmname" > "$logs/server-shm.log" 2>&1 &
spid2=$!
cleanup() {
    kill "$spid" "$spid2" 2>/dev/null; wait "$spid" "$spid2" 2>/dev/null
    if [ -n "${OUT:-}" ]; then mkdir -p "$OUT/cudnn-logs"; cp -r "$logs"/. "$OUT/cudnn-logs/"; fi
    [ "${KEEP:-0}" = 1 ] && echo "logs: $logs" || rm -rf "$logs"
}
trap cleanup EXIT INT TERM
i=0
while [ $i -lt 200 ] && ! { grep -q listening "$logs/server.log" && grep -q listening "$logs/server-shm.log"; } 2>/dev/null; do
    sleep 0.05; i=$((i + 1))
done
for p in "$spid" "$spid2"; do
    kill -0 "$p" 2>/dev/null || { echo "cudnn.sh: apigen-server-cuda-family did not start:"; cat "$logs"/server*.log; exit 1; }
done

url() {
    case $1 in
    unix) echo "unix://$logs/cudnn.sock" ;;
    tcp) echo "tcp://127.0.0.1:$port" ;;
    shm) echo "shm://$shmname" ;;
    esac
}
run() { # KEY MODE PROGRAM -> $logs/KEY.MODE.{out,err,rc}
    key=$1 mode=$2
    shift 2
    if [ "$mode" = native ]; then
        env LD_LIBRARY_PATH="$cudnnlib:$reallib" timeout 300 "$@" > "$logs/$key.$mode.out" 2> "$logs/$key.$mode.err"
    else
        env APIGEN_SERVER="$(url "$mode")" LD_LIBRARY_PATH="$stub:$cudnnlib:$reallib" timeout 300 "$@" \
            > "$logs/$key.$mode.out" 2> "$logs/$key.$mode.err"
    fi
    echo $? > "$logs/$key.$mode.rc"
}
first_error() { # KEY MODE: the first line that says what went wrong
    { grep -m1 -iE "apigen|error|fail" "$logs/$1.$2.err"; grep -m1 -E "CUDNN_STATUS|cuda[A-Z]|NO\b" "$logs/$1.$2.out"; } 2>/dev/null | head -n 1 | cut -c1-150
}
fails=0
table=$logs/table.txt
printf '%-13s | %-8s | %-8s | %-8s | %-8s | %s\n' case native unix tcp shm result > "$table"
printf '%s\n' "--------------+----------+----------+----------+----------+-----------------" >> "$table"
prog() { [ "$1" = step_loop ] && echo "$build/tests/cudnn/cudnn_step_loop" || echo "$ex/$1"; }
for e in conv layers backend_conv sublibs step_loop; do
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
    printf '%-13s | rc %-5s | rc %-5s | rc %-5s | rc %-5s | %s %s\n' "$e" \
        "$(cat "$logs/$e.native.rc")" "$(cat "$logs/$e.unix.rc")" "$(cat "$logs/$e.tcp.rc")" \
        "$(cat "$logs/$e.shm.rc")" "$res" "$why" >> "$table"
done
for e in conv layers backend_conv sublibs step_loop; do
    printf '\n%s (native stdout):\n' "$e" >> "$table"
    sed 's/^/  /' "$logs/$e.native.out" >> "$table"
done

# bad input, forwarded over each transport: the committed expectations
for m in unix tcp shm; do
    run bad $m "$ex/badinput"
    if [ "$(cat "$logs/bad.$m.rc")" = 0 ] && cmp -s tests/cudnn/badinput.expected "$logs/bad.$m.out"; then
        printf '\nbad input over %s: as expected\n' "$m" >> "$table"
    else
        fails=$((fails + 1))
        printf '\nbad input over %s: DIFFERS (exit %s)\n' "$m" "$(cat "$logs/bad.$m.rc")" >> "$table"
        diff -u tests/cudnn/badinput.expected "$logs/bad.$m.out" | sed 's/^/  /' >> "$table"
    fi
done
for s in server server-shm; do
    grep -q "rejected\|refused" "$logs/$s.log" 2>/dev/null &&
        { printf '\nserver refusals (%s.log, the bad-input cases):\n' "$s" >> "$table"; grep "rejected\|refused" "$logs/$s.log" | cut -c1-200 | sed 's/^/  /' >> "$table"; }
done

# a forwarded run loads no NVIDIA library (the stubs are all of cuDNN and
# the runtime there)
APIGEN_SERVER="$(url unix)" LD_LIBRARY_PATH="$stub:$cudnnlib:$reallib" LD_DEBUG=files "$ex/sublibs" > /dev/null 2> "$logs/ld.err"
nvlibs=$(grep -oE 'calling init: [^ ]+' "$logs/ld.err" | sed 's/calling init: //' |
         grep -E 'cuda|cudnn|nvidia' | sort -u)
own=$(readlink -f "$stub")
nvlibs=$(for f in $nvlibs; do readlink -f "$f"; done | sort -u)
bad=$(for f in $nvlibs; do case $(readlink -f "$f") in "$own"/*) ;; *) echo "$f" ;; esac; done)
if [ -n "$nvlibs" ] && [ -z "$bad" ]; then
    printf '\nforwarded guest: loads only apigen'"'"'s %s: ok\n' "$(echo $nvlibs | sed "s#$own/##g")" >> "$table"
else
    fails=$((fails + 1))
    printf '\nforwarded guest: FAILED, NVIDIA libraries loaded: %s\n' "$(echo ${bad:-none, and not the stub either})" >> "$table"
fi
[ "$parity" = 0 ] || { fails=$((fails + 1)); printf '\nsymbol parity: FAILED (see above)\n' >> "$table"; }

echo
cat "$table"
echo "$fails case(s) differ"
if [ -n "${OUT:-}" ]; then mkdir -p "$OUT"; cp "$table" "$OUT/cudnn-table.txt"; fi
[ "$fails" = 0 ]
