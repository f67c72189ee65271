#!/bin/sh
# tests/gpu/nvrtc.sh: the NVRTC and nvJitLink stubs on a machine with an
# NVIDIA GPU and the CUDA 13 toolkit. Builds the stubs (libnvrtc.so.13,
# libnvJitLink.so.13, libcuda.so.1), apigen-server-cuda-family (the driver,
# the runtime, NVRTC and nvJitLink in one server) and examples/nvrtc, then
# runs each example natively (NVIDIA's libraries and driver) and forwarded
# over unix, tcp and shm (tests/nvrtc/diff.sh: identical stdout and exit
# status, the PTX, CUBIN, LTO-IR and linked CUBIN hashes included):
#   - compile: headers from a temporary folder of the guest (-I, a quoted
#     include next to its includer, an angled one), an in-memory header, a
#     name expression; the PTX loaded with cuModuleLoadData through the
#     driver stub (one session with NVRTC's) and both kernels launched, the
#     templated one by its lowered name; every value checked ("all OK");
#   - jitlink: LTO-IR from NVRTC linked by nvJitLink with a PTX file of the
#     guest (nvJitLinkAddFile);
# then the bad-input program forwarded (tests/nvrtc/badinput.expected: a
# header that exists only where the server runs must not be read) and the
# symbol parity of both stubs. Prints a table; logs go to $OUT when set.
#
#   sh tests/gpu/nvrtc.sh            (from the repository root)
# Environment: BUILD (default build-gpu-nvrtc); NOBUILD=1 uses what BUILD
# already holds (a build made with the targets below).
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 1
build=${BUILD:-build-gpu-nvrtc}
if [ -z "${CUDA_HOME:-}" ]; then
    if command -v nvcc >/dev/null 2>&1; then CUDA_HOME=$(dirname "$(dirname "$(command -v nvcc)")")
    else CUDA_HOME=/usr/local/cuda; fi
fi
export CUDA_HOME PATH="$CUDA_HOME/bin:$PATH"
reallib=$CUDA_HOME/lib64
[ -e "$reallib/libnvrtc.so.13" ] || reallib=$CUDA_HOME/targets/$(uname -m)-linux/lib
command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L
case $build in /*) ;; *) build=$root/$build ;; esac
mkdir -p "$build"
if [ "${NOBUILD:-0}" != 1 ]; then
echo "== build ($build, CUDA_HOME=$CUDA_HOME)"
cmake -S . -B "$build" -DAPIGEN_BUILD_GENERATOR=OFF -DCMAKE_BUILD_TYPE=Release \
      -DCUDAToolkit_ROOT="$CUDA_HOME" > "$build/nvrtc.configure.log" 2>&1 ||
    { cat "$build/nvrtc.configure.log"; exit 1; }
cmake --build "$build" -j"$(nproc)" --target nvrtc_stub nvjitlink_stub cuda_stub \
      apigen-server-cuda-family nvrtc_compile nvrtc_jitlink nvrtc_badinput > "$build/nvrtc.build.log" 2>&1 ||
    { tail -n 50 "$build/nvrtc.build.log"; exit 1; }
fi
server=$build/examples/cuda/apigen-server-cuda-family
ex=$build/examples/nvrtc
# only the three stubs in front of NVIDIA's libraries (build/stub may hold
# others from earlier builds)
only=$build/nvrtc-only
mkdir -p "$only"
for l in libnvrtc.so.13 libnvJitLink.so.13 libcuda.so.1 libapigen-guest.so.2; do
    ln -sf "$build/stub/$l" "$only/$l"
done
nodriver=$build/nvrtc-nodriver # used only where no driver is installed
mkdir -p "$nodriver"
[ -e "$reallib/stubs/libcuda.so" ] && ln -sf "$reallib/stubs/libcuda.so" "$nodriver/libcuda.so.1"

logs=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/apigen-nvrtc.XXXXXX")}
mkdir -p "$logs"
table=""
fails=0
row() { table="$table$(printf '| %-10s | %-5s | %-4s | %s |' "$1" "$2" "$3" "$4")
"; }
for prog in compile jitlink; do
    expect=ok
    [ $prog = compile ] && expect=nodevice # with a driver: exit 0 and "all OK"
    for tr in unix tcp shm; do
        if sh tests/nvrtc/diff.sh "$server" "$only" "$reallib" "$nodriver" $tr $expect "$ex/$prog" \
            > "$logs/$prog.$tr.log" 2>&1; then
            what=$(grep -E "launch:|linked CUBIN:|cuInit" "$logs/$prog.$tr.log" | head -1 | sed 's/^  | //')
            row $prog $tr PASS "$what"
        else
            row $prog $tr FAIL "see $logs/$prog.$tr.log"
            fails=$((fails + 1))
        fi
    done
done
for tr in unix tcp shm; do
    if sh tests/nvrtc/badinput.sh "$server" "$only" "$nodriver" $tr tests/nvrtc/badinput.expected \
        "$ex/badinput" > "$logs/badinput.$tr.log" 2>&1; then
        row badinput $tr PASS "every bad input failed cleanly; no server file read"
    else
        row badinput $tr FAIL "see $logs/badinput.$tr.log"
        fails=$((fails + 1))
    fi
done
for l in libnvrtc.so.13 libnvJitLink.so.13; do
    if sh tests/nvrtc/parity.sh "$reallib/$l" "$build/stub/$l" > "$logs/parity.$l.log" 2>&1; then
        row parity - PASS "$(sed -n 's/^PASS: //p' "$logs/parity.$l.log")"
    else
        row parity - FAIL "$l: see $logs/parity.$l.log"
        fails=$((fails + 1))
    fi
done
echo
echo "| program    | path  | ok   | detail |"
echo "| ---        | ---   | ---  | ---    |"
printf '%s' "$table"
echo
echo "compile natively:"
sed -n 's/^  | /  /p' "$logs/compile.unix.log"
echo "logs: $logs"
[ $fails = 0 ] && echo "nvrtc.sh: all passed" || echo "nvrtc.sh: $fails failed"
[ $fails = 0 ]
