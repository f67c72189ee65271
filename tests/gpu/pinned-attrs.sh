#!/bin/sh
# tests/gpu/pinned-attrs.sh: pointer queries about pinned host memory on a GPU, natively and
# forwarded over unix, tcp and shm: tests/cuda/driver/pinned_attrs_ci.c (cuPointerGetAttribute,
# cuPointerGetAttributes, cuMemHostGetDevicePointer_v2, cuMemHostGetFlags through the driver
# stub) and tests/cuda/pinned_attrs_rt.c (cudaPointerGetAttributes, cudaHostGetDevicePointer,
# cudaHostGetFlags through the runtime stub, and through NVIDIA's libcudart over the driver
# stub). The outputs must be identical but for the differences CI documents (the same sed
# scripts as tests/cuda/CMakeLists.txt, applied to the native output): BUFFER_ID is the
# driver's alone (CUDA_ERROR_NOT_SUPPORTED through the stub); over tcp:// the device cannot
# reach the memory (no device pointer). Then the native raw value of every attribute 1-21
# (pinned_attrs_ci --all), natively and through the driver stub, for reading (not compared:
# the stub refuses what only the driver knows). Exit 1 on a difference.
#   NOBUILD=1 BUILD=/tmp/bd sh tests/gpu/pinned-attrs.sh
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 1
B=${BUILD:-/tmp/bd}
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
real=$CUDA_HOME/lib64
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pinned-attrs.XXXXXX")
srv=
stop() { [ -n "$srv" ] && kill "$srv" 2>/dev/null && wait "$srv" 2>/dev/null; srv=; }
trap 'stop; rm -rf "$tmp"' EXIT INT TERM
if [ "${NOBUILD:-0}" != 1 ]; then
    cmake -S . -B "$B" -DAPIGEN_BUILD_GENERATOR=OFF -DCMAKE_BUILD_TYPE=Release > "$tmp/configure.log" 2>&1 ||
        { tail -20 "$tmp/configure.log"; exit 1; }
    cmake --build "$B" -j"$(nproc)" --target cudart_stub cuda_stub apigen-server-cudart apigen-server-cuda \
        > "$tmp/build.log" 2>&1 || { tail -20 "$tmp/build.log"; exit 1; }
fi
gcc -O1 -o "$tmp/drv" tests/cuda/driver/pinned_attrs_ci.c -I"$CUDA_HOME/include" -L"$real/stubs" -lcuda &&
    gcc -O1 -o "$tmp/rt" tests/cuda/pinned_attrs_rt.c -I"$CUDA_HOME/include" -L"$real" -lcudart || exit 1
echo "== tests/gpu/pinned-attrs.sh, $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git rev-parse --short HEAD 2>/dev/null)"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null
echo "-- where cuda.h is silent, natively (tests/gpu/attr_probe.c):"
gcc -O1 -o "$tmp/probe" tests/gpu/attr_probe.c -I"$CUDA_HOME/include" -L"$real/stubs" -lcuda &&
    LD_LIBRARY_PATH=$real "$tmp/probe" 2>&1 | sed 's/^/  | /'
sed_drv="s/BUFFER_ID 0, nonzero$/BUFFER_ID 801, untouched/"
sed_drv_tcp="$sed_drv;/^registered/!s/cuMemHostGetDevicePointer_v2 0, the block's + offset$/cuMemHostGetDevicePointer_v2 801/;/^registered/!s/DEVICE_POINTER 0, as cuMemHostGetDevicePointer_v2$/DEVICE_POINTER 1, untouched/;/^registered/!s/device pointer as cuMemHostGetDevicePointer_v2,/device pointer 0,/"
sed_rt_tcp="s/cudaHostGetDevicePointer 0, the block's + offset$/cudaHostGetDevicePointer 801/;s/device pointer as cudaHostGetDevicePointer$/device pointer NULL/"
# start SERVER TRANSPORT: a fresh server; its url in $url
start() {
    case "$2" in
    unix) url="unix://$tmp/s.sock"; rm -f "$tmp/s.sock" ;;
    tcp) url="tcp://127.0.0.1:0" ;;
    shm) url="shm://apigen-pinned-attrs-$$" ;;
    esac
    "$B/examples/cuda/$1" --listen "$url" > "$tmp/server.log" 2>&1 &
    srv=$!
    i=0
    while [ $i -lt 100 ] && ! grep -q "listening" "$tmp/server.log" 2>/dev/null; do sleep 0.05; i=$((i + 1)); done
    [ "$2" = tcp ] && url=$(sed -n 's/.*listening on \([a-z]*:[^ ]*\) .*/\1/p' "$tmp/server.log" | head -1)
    grep -q "listening" "$tmp/server.log" || { echo "FAIL: $1 did not start:"; cat "$tmp/server.log"; exit 1; }
}
rc=0
LD_LIBRARY_PATH=$real "$tmp/drv" > "$tmp/drv.native" 2>&1 &&
    LD_LIBRARY_PATH=$real "$tmp/rt" > "$tmp/rt.native" 2>&1 ||
    { echo "FAIL: a native run (no GPU?)"; cat "$tmp/drv.native" "$tmp/rt.native" 2>/dev/null; exit 1; }
echo "-- native, driver program:"; sed 's/^/  | /' "$tmp/drv.native"
echo "-- native, runtime program:"; sed 's/^/  | /' "$tmp/rt.native"
# compare LABEL PROGRAM SERVER STUBDIRS SED TRANSPORT
compare() {
    start "$3" "$6"
    APIGEN_SERVER=$url LD_LIBRARY_PATH="$4" "$tmp/$2" > "$tmp/fwd" 2> "$tmp/fwd.err"
    stop
    sed "$5" "$tmp/$2.native" > "$tmp/want"
    if cmp -s "$tmp/want" "$tmp/fwd"; then
        echo "PASS: $1 over $6: as natively (documented differences applied)"
    else
        echo "FAIL: $1 over $6 (- native with the documented differences, + forwarded):"
        diff -u "$tmp/want" "$tmp/fwd" | sed 's/^/  /'
        sed 's/^/  stderr: /' "$tmp/fwd.err"
        rc=1
    fi
}
for tr in unix tcp shm; do
    sd=$sed_drv sr='s/^$//'
    [ $tr = tcp ] && sd=$sed_drv_tcp sr=$sed_rt_tcp
    compare "driver stub" drv apigen-server-cuda "$B/stub-driver" "$sd" $tr
    compare "runtime stub" rt apigen-server-cudart "$B/stub" "$sr" $tr
    compare "NVIDIA's runtime over the driver stub" rt apigen-server-cuda "$B/stub-driver:$real" "$sr" $tr
done
echo "-- every attribute, natively (for reading):"
LD_LIBRARY_PATH=$real "$tmp/drv" --all 2>&1 | sed 's/^/  | /'
start apigen-server-cuda unix
echo "-- every attribute, through the driver stub over unix (NOT_SUPPORTED = 801: refused):"
APIGEN_SERVER=$url LD_LIBRARY_PATH="$B/stub-driver" "$tmp/drv" --all 2>&1 | sed 's/^/  | /'
stop
exit $rc
