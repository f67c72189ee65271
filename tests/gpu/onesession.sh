#!/bin/sh
# tests/gpu/onesession.sh: the CUDA runtime and the driver in one program
# (tests/gpu/onesession.cu, built with nvcc -cudart shared -lcuda) natively,
# then with both of apigen's stubs first on LD_LIBRARY_PATH, over unix, tcp
# and shm to ONE apigen-server-cuda-family: same stdout and exit status, and
# the server's trace shows one session per run (the second API joined it).
#
#   tests/gpu/onesession.sh            (from the repository root)
# Environment: BUILD (default build-gpu-one), CUDA_ARCH (default sm_90), KEEP=1.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 1
build=${BUILD:-build-gpu-one}
arch=${CUDA_ARCH:-sm_90}
if [ -z "${CUDA_HOME:-}" ]; then
    if command -v nvcc >/dev/null 2>&1; then CUDA_HOME=$(dirname "$(dirname "$(command -v nvcc)")")
    else CUDA_HOME=/usr/local/cuda; fi
fi
export CUDA_HOME PATH="$CUDA_HOME/bin:$PATH"
command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L
case $build in /*) ;; *) build=$root/$build ;; esac
mkdir -p "$build"
echo "== build ($build, arch $arch)"
cmake -S . -B "$build" -DAPIGEN_BUILD_GENERATOR=OFF -DCMAKE_BUILD_TYPE=Release \
      -DCUDAToolkit_ROOT="$CUDA_HOME" -DAPIGEN_CUDA_ARCH="$arch" > "$build/one.configure.log" 2>&1 ||
    { cat "$build/one.configure.log"; exit 1; }
cmake --build "$build" -j"$(nproc)" --target cuda_stub cudart_stub apigen-server-cuda-family \
      > "$build/one.build.log" 2>&1 || { tail -n 50 "$build/one.build.log"; exit 1; }
prog=$build/onesession
nvcc -cudart shared -arch="$arch" -O2 -o "$prog" tests/gpu/onesession.cu -lcuda || exit 1
stub=$build/stub
server=$build/examples/cuda/apigen-server-cuda-family
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gpu-one.XXXXXX")
spid=
cleanup() { [ -n "$spid" ] && kill "$spid" 2>/dev/null && wait "$spid" 2>/dev/null; [ "${KEEP:-0}" = 1 ] || rm -rf "$tmp"; }
trap cleanup EXIT INT TERM
echo "== native"
"$prog" > "$tmp/native.out" 2> "$tmp/native.err"
nrc=$?
cat "$tmp/native.out"
status=0
printf '\n%-6s %-8s %-9s %s\n' transport result sessions first-difference
for tr in unix tcp shm; do
    case $tr in
    unix) url="unix://$tmp/s.sock" ;;
    tcp) url="tcp://127.0.0.1:0" ;;
    shm) url="shm://apigen-gpu-one-$$" ;;
    esac
    APIGEN_TRACE=1 "$server" --listen "$url" > "$tmp/server.$tr.log" 2>&1 &
    spid=$!
    i=0
    while [ $i -lt 200 ]; do grep -q listening "$tmp/server.$tr.log" && break; sleep 0.05; i=$((i + 1)); done
    [ "$tr" = tcp ] && url=$(sed -n 's/.*listening on \([a-z]*:[^ ]*\) .*/\1/p' "$tmp/server.$tr.log" | head -1)
    APIGEN_SERVER=$url LD_LIBRARY_PATH="$stub" timeout 300 "$prog" > "$tmp/fwd.$tr.out" 2> "$tmp/fwd.$tr.err"
    frc=$?
    kill "$spid"; wait "$spid" 2>/dev/null; spid=
    nsess=$(grep -c "server: [a-z]* new session" "$tmp/server.$tr.log")
    res=ok
    diffl=
    if [ "$frc" != "$nrc" ] || ! cmp -s "$tmp/native.out" "$tmp/fwd.$tr.out"; then
        res=DIFF
        diffl=$(diff "$tmp/native.out" "$tmp/fwd.$tr.out" | grep '^[<>]' | head -2 | tr '\n' ' ')
        [ "$frc" != "$nrc" ] && diffl="exit $nrc vs $frc; $diffl"
    fi
    [ "$nsess" = 1 ] || res="$res,SESSIONS"
    [ "$res" = ok ] || status=1
    printf '%-6s %-8s %-9s %s\n' "$tr" "$res" "$nsess" "$diffl"
    if [ "$res" != ok ]; then
        echo "---- forwarded stdout ($tr)"; cat "$tmp/fwd.$tr.out"
        echo "---- forwarded stderr ($tr)"; tail -n 20 "$tmp/fwd.$tr.err"
        echo "---- server log ($tr)"; grep -v '^apigen\[server [0-9]*\]: server: ' "$tmp/server.$tr.log" | tail -n 20
    fi
done
[ -n "${OUT:-}" ] && cp -r "$tmp" "$OUT/onesession" 2>/dev/null
exit $status
