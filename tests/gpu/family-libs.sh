#!/bin/sh
# tests/gpu/family-libs.sh: the CUDA family's stubs together on a machine
# with an NVIDIA GPU, the CUDA 13 toolkit and the driver's libnvidia-ml.so.1:
# apigen's libcuda.so.1, libcudart.so.13, libcublas.so.13 and
# libnvidia-ml.so.1 all first on LD_LIBRARY_PATH, and ONE
# apigen-server-cuda-family (built over NVIDIA's libraries, NVML the
# machine's: APIGEN_NVML_LIBRARY) listening on unix, tcp and shm. Runs
# natively and forwarded over each transport, comparing stdout and exit
# status, and counts the server's sessions per guest process (APIGEN_TRACE:
# "new session" lines; every program must open exactly one, whichever stubs
# it loads):
#   - examples/cublas/gemm, batched, reduce (cuBLAS alone), gemm_runtime
#     (cudaMalloc memory and a cudaStreamCreate stream given to cuBLAS: the
#     runtime's and cuBLAS's stubs in one session);
#   - examples/cublas/badinput forwarded (must print
#     tests/cublas/badinput.expected: forged handles, foreign pointers);
#   - examples/nvml/nvml_query and pynvml_query.py (volatile values print
#     as "present"; pynvml missing: skipped);
#   - tests/nvml/family_order.c (NVML's index i and CUDA's ordinal i are one
#     GPU: same UUID; CUDA_DEVICE_ORDER=PCI_BUS_ID natively and on the server),
#     forwarded over one server and over two (APIGEN_SERVER=unix,tcp of the
#     same server: every GPU twice, server 0's first); family_order --mapped
#     (NVML opens the session, then cudaHostAllocMapped: as natively over
#     unix, tcp (a twin) and shm);
#   - nvidia-smi -L natively and over two servers: the native list, then the
#     same GPUs again numbered after it.
# Prints a table; with OUT set the logs and the table go to $OUT/family-libs.
#
#   tests/gpu/family-libs.sh            (from the repository root)
# Environment: BUILD (default build-gpu-family), NVML_INCLUDE (folder of
# nvml.h; default /opt/apigen/nvml/include, then the nvidia-nvml-dev wheel in
# .whl/, then the toolkit's), NVML_LIB (default: ldconfig's libnvidia-ml.so.1),
# KEEP=1 keeps the logs. Exit 0 when every row is as expected.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 1
build=${BUILD:-build-gpu-family}
case $build in /*) ;; *) build=$root/$build ;; esac
if [ -z "${CUDA_HOME:-}" ]; then
    if command -v nvcc >/dev/null 2>&1; then CUDA_HOME=$(dirname "$(dirname "$(command -v nvcc)")")
    else CUDA_HOME=/usr/local/cuda; fi
fi
export CUDA_HOME PATH="$CUDA_HOME/bin:$PATH"
reallib=$CUDA_HOME/lib64
[ -e "$reallib/libcublas.so.13" ] || reallib=$CUDA_HOME/targets/$(uname -m)-linux/lib
mkdir -p "$build"
if [ -n "${OUT:-}" ]; then logs=$OUT/family-libs; mkdir -p "$logs"; else logs=$(mktemp -d "${TMPDIR:-/tmp}/apigen-family.XXXXXX"); fi

# nvml.h as tests/gpu/nvml.sh finds it
inc=${NVML_INCLUDE:-}
[ -z "$inc" ] && [ -f /opt/apigen/nvml/include/nvml.h ] && inc=/opt/apigen/nvml/include
if [ -z "$inc" ]; then
    whl=$(ls "$root"/.whl/nvidia_nvml_dev-13.0.87-*.whl 2>/dev/null | head -n 1)
    if [ -n "$whl" ]; then
        mkdir -p "$build/nvml-wheel" &&
            python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' "$whl" "$build/nvml-wheel" &&
            inc=$(dirname "$(find "$build/nvml-wheel" -name nvml.h | head -n 1)")
    fi
fi
if [ -z "$inc" ]; then
    for d in "$CUDA_HOME/include" /usr/include; do [ -f "$d/nvml.h" ] && { inc=$d; break; }; done
fi
[ -n "$inc" ] && [ -f "$inc/nvml.h" ] || { echo "family-libs.sh: no nvml.h (set NVML_INCLUDE)"; exit 1; }
nvlib=${NVML_LIB:-$(ldconfig -p 2>/dev/null | sed -n 's/.*libnvidia-ml.so.1 (libc6,x86-64) => //p' | head -n 1)}
[ -n "$nvlib" ] && [ -e "$nvlib" ] || { echo "family-libs.sh: no libnvidia-ml.so.1 (set NVML_LIB)"; exit 1; }
nvlib=$(readlink -f "$nvlib")
nvdir=$(dirname "$nvlib")
command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L

echo "== build ($build, CUDA_HOME=$CUDA_HOME, NVML $nvlib, nvml.h from $inc)"
cmake -S . -B "$build" -DAPIGEN_BUILD_GENERATOR=OFF -DCMAKE_BUILD_TYPE=Release \
      -DCUDAToolkit_ROOT="$CUDA_HOME" -DAPIGEN_NVML_INCLUDE_DIR="$inc" -DAPIGEN_NVML_LIBRARY="$nvlib" \
      > "$logs/configure.log" 2>&1 || { tail -n 40 "$logs/configure.log"; exit 1; }
cmake --build "$build" -j"$(nproc)" --target cuda_stub cudart_stub cublas_stub nvml_stub \
      apigen-server-cuda-family cublas_gemm cublas_batched cublas_reduce cublas_badinput \
      cublas_gemm_runtime nvml_query > "$logs/build.log" 2>&1 || { tail -n 50 "$logs/build.log"; exit 1; }
stub=$build/stub
server=$build/examples/cuda/apigen-server-cuda-family
ex=$build/examples/cublas
order=$build/family_order
gcc -O2 -I"$CUDA_HOME/include" -I"$inc" -o "$order" tests/nvml/family_order.c \
    -L"$reallib" -lcudart "$nvlib" > "$logs/order.build.log" 2>&1 || { cat "$logs/order.build.log"; exit 1; }
for f in libcuda.so.1 libcudart.so.13 libcublas.so.13 libnvidia-ml.so.1; do
    [ -e "$stub/$f" ] || { echo "family-libs.sh: no stub $f in $stub"; exit 1; }
done
[ -x "$server" ] || { echo "family-libs.sh: no $server"; exit 1; }
ldd "$server" | grep -q "$nvdir/libnvidia-ml.so.1\|libnvidia-ml.so.1 => $nvlib" ||
    echo "note: the family server's libnvidia-ml.so.1: $(ldd "$server" | grep nvidia-ml)"

sockdir=$(mktemp -d "${TMPDIR:-/tmp}/apigen-family-sock.XXXXXX") # short path for the socket
port=$(( 30000 + ($$ % 20000) ))
shmname=apigen-family-$$
export CUDA_DEVICE_ORDER=PCI_BUS_ID # CUDA's ordinals in NVML's (PCI) order, natively and on the server
APIGEN_TRACE=1 "$server" --listen "unix://$sockdir/f.sock" --listen "tcp://127.0.0.1:$port" \
    --listen "shm://$shmname" > "$logs/server.log" 2>&1 &
spid=$!
cleanup() {
    kill "$spid" 2>/dev/null; wait "$spid" 2>/dev/null
    rm -rf "$sockdir"
    if [ -z "${OUT:-}" ]; then [ "${KEEP:-0}" = 1 ] && echo "logs: $logs" || rm -rf "$logs"; fi
}
trap cleanup EXIT INT TERM
i=0
while [ $i -lt 200 ] && [ "$(grep -c listening "$logs/server.log" 2>/dev/null)" -lt 3 ]; do sleep 0.05; i=$((i + 1)); done
kill -0 "$spid" 2>/dev/null && [ "$(grep -c listening "$logs/server.log")" -ge 3 ] ||
    { echo "family-libs.sh: the server did not start:"; cat "$logs/server.log"; exit 1; }

url() {
    case $1 in
    unix) echo "unix://$sockdir/f.sock" ;; tcp) echo "tcp://127.0.0.1:$port" ;; shm) echo "shm://$shmname" ;;
    two) echo "unix://$sockdir/f.sock,tcp://127.0.0.1:$port" ;;
    esac
}
sessions_now() { grep -c "server: [a-z]* new session" "$logs/server.log"; }
# before a native run: no session process of an earlier forwarded run still on
# the GPU (NVML's process lists would show it), up to 10 s
gpu_idle() {
    command -v nvidia-smi >/dev/null 2>&1 || return 0
    j=0
    while [ $j -lt 100 ] && [ -n "$(nvidia-smi --query-compute-apps=pid --format=csv,noheader 2>/dev/null)" ]; do
        sleep 0.1; j=$((j + 1))
    done
}
# run KEY MODE PROGRAM...: $logs/KEY.MODE.{out,err,rc}, and .sess (sessions it opened)
run() {
    key=$1 mode=$2; shift 2
    if [ "$mode" = native ]; then
        gpu_idle
        env LD_LIBRARY_PATH="$reallib:$nvdir" timeout 300 "$@" > "$logs/$key.$mode.out" 2> "$logs/$key.$mode.err"
        echo $? > "$logs/$key.$mode.rc"
        return
    fi
    before=$(sessions_now)
    env APIGEN_SERVER="$(url "$mode")" LD_LIBRARY_PATH="$stub:$reallib" timeout 300 "$@" \
        > "$logs/$key.$mode.out" 2> "$logs/$key.$mode.err"
    echo $? > "$logs/$key.$mode.rc"
    sleep 0.2 # the session's last trace lines
    echo $(( $(sessions_now) - before )) > "$logs/$key.$mode.sess"
}
rc() { cat "$logs/$1.$2.rc"; }
first_error() {
    { grep -m1 -iE "apigen|error|fail" "$logs/$1.$2.err"; grep -m1 -E "CUBLAS_STATUS|NVML_ERROR|\bNO\b|NOT" "$logs/$1.$2.out"; } 2>/dev/null |
        head -n 1 | cut -c1-150
}
fails=0
table=$logs/table.txt
printf '%-14s | %-6s | %-10s | %-10s | %-10s | %s\n' case native "unix(sess)" "tcp(sess)" "shm(sess)" result > "$table"
printf '%s\n' "---------------+--------+------------+------------+------------+-----------------" >> "$table"
row() { # KEY PROGRAM...: native, then unix tcp shm; identical and one session each
    key=$1; shift
    run "$key" native "$@"
    if [ "$(rc "$key" native)" = 77 ]; then
        printf '%-14s | %-6s | %-10s | %-10s | %-10s | %s\n' "$key" 77 - - - "skipped ($(head -n 1 "$logs/$key.native.out"))" >> "$table"
        return
    fi
    res=identical why=
    [ "$(rc "$key" native)" = 0 ] || { res="NATIVE FAILED"; why="native: $(first_error "$key" native)"; }
    for m in unix tcp shm; do
        run "$key" $m "$@"
        if [ "$(rc "$key" $m)" != "$(rc "$key" native)" ] || ! cmp -s "$logs/$key.native.out" "$logs/$key.$m.out"; then
            res=DIFFERS; [ -z "$why" ] && why="$m: $(first_error "$key" $m)"
        fi
        [ "$(cat "$logs/$key.$m.sess")" = 1 ] || { [ "$res" = identical ] && res=SESSIONS; why="$why $m: $(cat "$logs/$key.$m.sess") sessions"; }
    done
    [ "$res" = identical ] || fails=$((fails + 1))
    printf '%-14s | rc %-3s | rc %-3s (%s) | rc %-3s (%s) | rc %-3s (%s) | %s %s\n' "$key" "$(rc "$key" native)" \
        "$(rc "$key" unix)" "$(cat "$logs/$key.unix.sess")" "$(rc "$key" tcp)" "$(cat "$logs/$key.tcp.sess")" \
        "$(rc "$key" shm)" "$(cat "$logs/$key.shm.sess")" "$res" "$why" >> "$table"
}
for e in gemm batched reduce gemm_runtime; do row "$e" "$ex/$e"; done
row nvml_query "$build/examples/nvml/nvml_query"
export PYTHONPATH=${PYTHONPATH:-/opt/apigen/python} # scripts/install-deps.sh puts pynvml there
row pynvml_query python3 examples/nvml/pynvml_query.py
row family_order "$order"

# bad input, forwarded: the committed expectations, one session each
for m in unix tcp shm; do
    run badinput $m "$ex/badinput"
    if [ "$(rc badinput $m)" = 0 ] && cmp -s tests/cublas/badinput.expected "$logs/badinput.$m.out" &&
       [ "$(cat "$logs/badinput.$m.sess")" = 1 ]; then
        printf 'badinput over %s: as expected, 1 session\n' "$m" >> "$table"
    else
        fails=$((fails + 1))
        printf 'badinput over %s: DIFFERS (exit %s, %s sessions)\n' "$m" "$(rc badinput $m)" "$(cat "$logs/badinput.$m.sess")" >> "$table"
        diff -u tests/cublas/badinput.expected "$logs/badinput.$m.out" | sed 's/^/  /' >> "$table"
    fi
done

# NVML opens the session, then the runtime's mapped pinned memory: the
# session's arena serves the family (unix, shm; tcp has no arena: a twin),
# as natively
run mapped native "$order" --mapped
for m in unix tcp shm; do
    run mapped $m "$order" --mapped
    if [ "$(rc mapped native)" = 0 ] && [ "$(rc mapped $m)" = 0 ] && cmp -s "$logs/mapped.native.out" "$logs/mapped.$m.out"; then
        r=ok
    else
        r=FAILED
    fi
    [ $r = ok ] || fails=$((fails + 1))
    printf 'mapped memory after nvmlInit over %s: %s (%s)\n' $m $r "$(head -n 1 "$logs/mapped.$m.out")" >> "$table"
done

# two servers (the same server twice: unix, then tcp): every GPU twice, server 0's first
n=$(grep -c '^index [0-9]*: .*one GPU$' "$logs/family_order.native.out")
run family_order two "$order"
if [ "$(rc family_order two)" = 0 ] && [ "$(grep -c ': one GPU$' "$logs/family_order.two.out")" = $((2 * n)) ] &&
   [ "$(cat "$logs/family_order.two.sess")" = 2 ]; then
    printf 'family_order over two servers: %s GPUs (2 x %s), each index one GPU through NVML and CUDA, 2 sessions\n' $((2 * n)) "$n" >> "$table"
else
    fails=$((fails + 1))
    printf 'family_order over two servers: FAILED (exit %s, %s sessions, want %s GPUs)\n' "$(rc family_order two)" \
        "$(cat "$logs/family_order.two.sess")" $((2 * n)) >> "$table"
    sed 's/^/  /' "$logs/family_order.two.out" >> "$table"
fi
if command -v nvidia-smi >/dev/null 2>&1; then
    run smi_L native nvidia-smi -L
    run smi_L two nvidia-smi -L
    # the native list, then the same GPUs numbered on after it
    { cat "$logs/smi_L.native.out"
      k=$(grep -c '^GPU [0-9]*:' "$logs/smi_L.native.out")
      awk -v k="$k" '/^GPU [0-9]+:/ { sub(/^GPU [0-9]+/, "GPU " ($2 + k)) } { print }' "$logs/smi_L.native.out"
    } > "$logs/smi_L.want"
    if [ "$(rc smi_L two)" = 0 ] && cmp -s "$logs/smi_L.want" "$logs/smi_L.two.out"; then
        printf 'nvidia-smi -L over two servers: the native list twice, server 0 first: ok\n' >> "$table"
    else
        fails=$((fails + 1))
        printf 'nvidia-smi -L over two servers: DIFFERS (exit %s)\n' "$(rc smi_L two)" >> "$table"
        diff -u "$logs/smi_L.want" "$logs/smi_L.two.out" | sed 's/^/  /' >> "$table"
        tail -n 5 "$logs/smi_L.two.err" | sed 's/^/  stderr: /' >> "$table"
    fi
else
    printf 'nvidia-smi -L over two servers: skipped (no nvidia-smi)\n' >> "$table"
fi
for e in gemm_runtime family_order; do
    printf '\n%s (native stdout):\n' "$e" >> "$table"
    sed 's/^/  /' "$logs/$e.native.out" >> "$table"
done

echo
cat "$table"
echo "$fails case(s) not as expected (logs: $logs)"
[ "$fails" = 0 ]
