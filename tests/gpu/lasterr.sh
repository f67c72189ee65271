#!/bin/sh
# tests/gpu/lasterr.sh: on a machine with an NVIDIA GPU and the CUDA 13
# toolkit, run tests/gpu/lasterr.cu (launches checked with cudaGetLastError,
# bad launch configurations, a sync call's error, a kernel's fault) natively
# and through the cudart stub over unix and tcp; stdout must be the same,
# and the loops of launch + cudaGetLastError must make no round trip
# (APIGEN_TRACE "rt" lines between the program's MARK lines); APIGEN_LAST_ERROR=0
# is the control (a round trip per cudaGetLastError, as before).
#
#   BUILD=/tmp/bd tests/gpu/lasterr.sh   (from the repository root; CUDA_HOME,
#                                         CUDA_ARCH as for honest.sh; KEEP=1)
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 1
build=${BUILD:-build-gpu}
arch=${CUDA_ARCH-native}
case $arch in [0-9]*) arch=sm_$arch ;; esac # nvcc -arch: sm_90 (90 accepted), native
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
export PATH="$CUDA_HOME/bin:$PATH"
reallib=$CUDA_HOME/lib64
case $build in /*) ;; *) build=$root/$build ;; esac
mkdir -p "$build"
if [ ! -x "$build/examples/cuda/apigen-server-cudart" ] || [ ! -e "$build/stub/libcudart.so.13" ]; then
    cmake -S . -B "$build" -DAPIGEN_BUILD_GENERATOR=OFF -DCMAKE_BUILD_TYPE=Release \
          -DCUDAToolkit_ROOT="$CUDA_HOME" -DAPIGEN_CUDA_ARCH="$arch" > "$build/lasterr.configure.log" 2>&1 ||
        { cat "$build/lasterr.configure.log"; exit 1; }
    cmake --build "$build" -j"$(nproc)" --target cudart_stub apigen-server-cudart \
        > "$build/lasterr.build.log" 2>&1 || { tail -n 50 "$build/lasterr.build.log"; exit 1; }
fi
logs=$(mktemp -d "${TMPDIR:-/tmp}/apigen-lasterr.XXXXXX")
spid=
cleanup() { [ -n "$spid" ] && kill "$spid" 2>/dev/null && wait "$spid" 2>/dev/null
            [ "${KEEP:-0}" = 1 ] && echo "logs: $logs" || rm -rf "$logs"; }
trap cleanup EXIT INT TERM
gencode=
[ -n "$arch" ] && gencode="-arch=$arch"
# shellcheck disable=SC2086
nvcc $gencode -cudart shared -o "$logs/lasterr" tests/gpu/lasterr.cu || exit 1
port=$(( 30000 + ($$ % 20000) ))
"$build/examples/cuda/apigen-server-cudart" --listen "unix://$logs/s.sock" \
    --listen "tcp://127.0.0.1:$port" > "$logs/server.log" 2>&1 &
spid=$!
i=0
while [ $i -lt 100 ] && [ "$(grep -c listening "$logs/server.log" 2>/dev/null)" -lt 2 ]; do sleep 0.05; i=$((i + 1)); done

rts() {
    awk -v b="MARK $1 begin" -v e="MARK $1 end" '
        $0 == b { on = 1; next } $0 == e { on = 0 }
        on && /^apigen wire \[[0-9]+\]: rt / { n++ } END { print n + 0 }' "$2"
}
rc=0
for arg in "" fault; do
    LD_LIBRARY_PATH="$reallib" timeout 120 "$logs/lasterr" $arg > "$logs/native$arg" 2> "$logs/native$arg.err"
    for tr in unix tcp; do
        url="unix://$logs/s.sock"
        [ $tr = tcp ] && url="tcp://127.0.0.1:$port"
        for le in 1 0; do
            o="$logs/$tr.$le$arg"
            APIGEN_SERVER=$url APIGEN_TRACE=1 APIGEN_LAST_ERROR=$le LD_LIBRARY_PATH="$build/stub" \
                timeout 120 "$logs/lasterr" $arg > "$o" 2> "$o.err"
            same=same
            cmp -s "$logs/native$arg" "$o" || { same=DIFFERENT; rc=1; diff -u "$logs/native$arg" "$o"; }
            l=$(rts loop "$o.err") a=$(rts "after the errors" "$o.err")
            echo "lasterr${arg:+ $arg} $tr APIGEN_LAST_ERROR=$le: output $same as natively;" \
                 "round trips in 200 iterations (2 launches + 2 cudaGetLastError each): $l, after the errors: $a"
            if [ $le = 1 ] && { [ "$l" != 0 ] || [ "$a" != 0 ]; }; then
                rc=1
                awk '/^MARK (loop|after the errors) begin/ { on = 1 } on && /: rt / { print "  " $0 }
                     /^MARK (loop|after the errors) end/ { on = 0 }' "$o.err" | head -10
            fi
        done
    done
done
echo "native output:"; sed 's/^/  /' "$logs/native"
[ $rc = 0 ] && echo "PASS: lasterr" || echo "FAIL: lasterr"
exit $rc
