#!/bin/sh
# tests/gpu/two-gpu.sh: on a machine with two NVIDIA GPUs and the CUDA 13
# toolkit, run examples/cuda/multi_gpu (two devices: per-device streams,
# peer access, a kernel on device 1 reading device 0's memory, cudaMemcpyPeer
# and cudaMemcpyPeerAsync) and examples/cuda/arrays:
#   native                   the real runtime, both GPUs
#   unix, tcp, shm           one apigen-server-cudart holding both GPUs
#   2srv-unix, 2srv-tcp      two servers, CUDA_VISIBLE_DEVICES=0 and =1, the
#                            program given APIGEN_SERVER=url0,url1
# and print a table. One server: stdout must equal the native run's. Two
# servers: the native stdout with the documented differences applied (the
# devices of two servers have no peer access: "peer access ...: no", the
# peer kernel is skipped and enabling is cudaErrorPeerAccessUnsupported;
# peer copies are staged through the guest and give the same bytes:
# docs/multi-gpu.md). Also the CI program tests/cuda/multi_gpu_ci (no
# kernels) over the real runtime in the same modes.
#
#   sh tests/gpu/two-gpu.sh            (from the repository root)
#
# Environment: BUILD (default build-gpu), CUDA_ARCH (default native),
# NOBUILD=1 to use an existing build, KEEP=1 to keep the logs.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 1
build=${BUILD:-build-gpu}
arch=${CUDA_ARCH-native}
if [ -z "${CUDA_HOME:-}" ]; then
    if command -v nvcc >/dev/null 2>&1; then CUDA_HOME=$(dirname "$(dirname "$(command -v nvcc)")")
    else CUDA_HOME=/usr/local/cuda; fi
fi
export CUDA_HOME PATH="$CUDA_HOME/bin:$PATH"
reallib=$CUDA_HOME/lib64
[ -e "$reallib/libcudart.so.13" ] || reallib=$CUDA_HOME/targets/$(uname -m)-linux/lib
command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L
ngpu=$(nvidia-smi -L 2>/dev/null | grep -c "^GPU")
ngpu=${ngpu:-0}
[ "$ngpu" -ge 2 ] || echo "two-gpu: $ngpu GPU(s) visible: the programs say so and the table still runs"
case $build in /*) ;; *) build=$root/$build ;; esac
if [ "${NOBUILD:-0}" != 1 ]; then
    mkdir -p "$build"
    echo "== build ($build)"
    cmake -S . -B "$build" -DAPIGEN_BUILD_GENERATOR=OFF -DCMAKE_BUILD_TYPE=Release \
          -DCUDAToolkit_ROOT="$CUDA_HOME" -DAPIGEN_CUDA_ARCH="$arch" > "$build/two-gpu.configure.log" 2>&1 ||
        { cat "$build/two-gpu.configure.log"; exit 1; }
    cmake --build "$build" -j"$(nproc)" --target cudart_stub apigen-server-cudart cuda_examples cuda_multi_gpu_ci \
        > "$build/two-gpu.build.log" 2>&1 || { tail -n 50 "$build/two-gpu.build.log"; exit 1; }
fi
stub=$build/stub
server=$build/examples/cuda/apigen-server-cudart
ex=$build/examples/cuda
ci=$build/tests/cuda/cuda_multi_gpu_ci
logs=$(mktemp -d "${TMPDIR:-/tmp}/apigen-2gpu.XXXXXX")
port=$(( 30000 + ($$ % 15000) ))
pids=
cleanup() {
    for p in $pids; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
    if [ "${KEEP:-0}" = 1 ]; then echo "logs: $logs"; else rm -rf "$logs"; fi
}
trap cleanup EXIT INT TERM
wait_listening() { # LOG COUNT
    i=0
    while [ $i -lt 200 ]; do
        n=$(grep -c listening "$1" 2>/dev/null)
        [ "${n:-0}" -ge "$2" ] && break
        sleep 0.05; i=$((i + 1))
    done
}
# one server, both GPUs
"$server" --listen "unix://$logs/one.sock" --listen "tcp://127.0.0.1:$port" --listen "shm://apigen-2gpu-$$" \
    > "$logs/server-one.log" 2>&1 &
pids="$pids $!"
# two servers, one GPU each
CUDA_VISIBLE_DEVICES=0 "$server" --listen "unix://$logs/a.sock" --listen "tcp://127.0.0.1:$((port + 1))" \
    > "$logs/server-a.log" 2>&1 &
pids="$pids $!"
CUDA_VISIBLE_DEVICES=1 "$server" --listen "unix://$logs/b.sock" --listen "tcp://127.0.0.1:$((port + 2))" \
    > "$logs/server-b.log" 2>&1 &
pids="$pids $!"
wait_listening "$logs/server-one.log" 3
wait_listening "$logs/server-a.log" 2
wait_listening "$logs/server-b.log" 2

now_ms() { date +%s%3N; }
run() { # NAME PROGRAM MODE
    name=$1 prog=$2 mode=$3
    t0=$(now_ms)
    case $mode in
    native) LD_LIBRARY_PATH="$reallib" timeout 300 "$prog" ;;
    unix) APIGEN_SERVER="unix://$logs/one.sock" LD_LIBRARY_PATH="$stub" timeout 300 "$prog" ;;
    tcp) APIGEN_SERVER="tcp://127.0.0.1:$port" LD_LIBRARY_PATH="$stub" timeout 300 "$prog" ;;
    shm) APIGEN_SERVER="shm://apigen-2gpu-$$" LD_LIBRARY_PATH="$stub" timeout 300 "$prog" ;;
    2srv-unix) APIGEN_SERVER="unix://$logs/a.sock,unix://$logs/b.sock" LD_LIBRARY_PATH="$stub" timeout 300 "$prog" ;;
    2srv-tcp) APIGEN_SERVER="tcp://127.0.0.1:$((port + 1)),tcp://127.0.0.1:$((port + 2))" LD_LIBRARY_PATH="$stub" timeout 300 "$prog" ;;
    esac > "$logs/$name.$mode.out" 2> "$logs/$name.$mode.err"
    echo $? > "$logs/$name.$mode.rc"
    echo $(( $(now_ms) - t0 )) > "$logs/$name.$mode.ms"
}
# what two servers answer instead of the native peer-access lines
two_servers() { # NAME: native stdout -> expected two-server stdout
    case $1 in
    multi_gpu)
        sed -e 's/^peer access \(.*\): yes$/peer access \1: no/' \
            -e 's/^peer kernel (device 1 reads device 0): .*$/enable peer access 1->0: cudaErrorPeerAccessUnsupported/' ;;
    multi_gpu_ci)
        sed -e 's/^peer access \(.*\): yes$/peer access \1: no/' \
            -e 's/^enable peer access 1->0: cudaSuccess$/enable peer access 1->0: cudaErrorPeerAccessUnsupported/' \
            -e '/^  enable again/d' -e '/^  disable/d' ;;
    *) cat ;;
    esac
}
modes="native unix tcp shm 2srv-unix 2srv-tcp"
fails=0
printf '\n%-13s' program
for m in $modes; do printf ' | %-15s' "$m"; done
printf ' | result\n'
for e in multi_gpu multi_gpu_ci arrays; do
    prog=$ex/$e
    [ $e = multi_gpu_ci ] && prog=$ci
    for m in $modes; do run "$e" "$prog" "$m"; done
    res=identical
    two_servers "$e" < "$logs/$e.native.out" > "$logs/$e.want2"
    for m in unix tcp shm 2srv-unix 2srv-tcp; do
        want=$logs/$e.native.out
        case $m in 2srv-*) want=$logs/$e.want2 ;; esac
        if [ "$(cat "$logs/$e.$m.rc")" != "$(cat "$logs/$e.native.rc")" ] || ! cmp -s "$want" "$logs/$e.$m.out"; then
            res="DIFFERS ($m)"; fails=$((fails + 1))
        fi
    done
    [ "$(cat "$logs/$e.native.rc")" = 0 ] || { res="$res; native exit $(cat "$logs/$e.native.rc")"; fails=$((fails + 1)); }
    printf '%-13s' "$e"
    for m in $modes; do printf ' | exit %s %6s ms' "$(cat "$logs/$e.$m.rc")" "$(cat "$logs/$e.$m.ms")"; done
    printf ' | %s\n' "$res"
done
echo
for e in multi_gpu multi_gpu_ci arrays; do
    echo "== $e (native stdout)"; sed 's/^/   /' "$logs/$e.native.out"
    for m in unix tcp shm 2srv-unix 2srv-tcp; do
        want=$logs/$e.native.out
        case $m in 2srv-*) want=$logs/$e.want2 ;; esac
        if ! cmp -s "$want" "$logs/$e.$m.out"; then
            echo "== $e ($m differs from what is expected)"; diff -u "$want" "$logs/$e.$m.out" | sed 's/^/   /'
            echo "   stderr:"; sed 's/^/   /' "$logs/$e.$m.err" | tail -n 20
        fi
    done
done
for f in "$logs"/server-*.log; do
    grep -qi "error\|refused\|fatal" "$f" && { echo "== $f"; tail -n 20 "$f"; }
done
echo "two-gpu: $fails difference(s)"
[ $fails = 0 ]
