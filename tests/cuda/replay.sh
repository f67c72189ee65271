#!/bin/sh
# A CUDA example recorded on a GPU machine (tests/gpu/record.sh), replayed:
# the program (the recorded binary, NAME.bin, when there is one) runs against
# the stub built here and a server that answers from NAME.rec.gz; its stdout
# and exit status must equal the native run's (NAME.expected, .expected.rc)
# and every recorded request must come, in order (tests/replay/replay.sh).
#   replay.sh SERVER STUB_DIR RECORDINGS_DIR NAME [PROGRAM]
# Runtime recordings (tests/cuda/recordings, apigen-server-cudart) and driver
# ones (tests/cuda/recordings-driver: a program built with plain nvcc, its
# static runtime over build/stub/libcuda.so.1, apigen-server-cuda; or built
# with -cudart shared, NVIDIA's libcudart.so.13 over it: NAME.cudart) alike. A
# server linked against a library CI lacks takes REPLAY_SERVER_LIBS (the
# toolkit's stubs library as libcuda.so.1: a replay calls nothing).
# The program runs without CUDA_* and APIGEN_* variables of its own (as
# tests/gpu/record.sh recorded it): they could change what it sends.
set -u
server=$1 stub=$2 dir=$3 name=$4 prog=${5:-}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cuda-replay.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
[ -f "$dir/$name.bin" ] && prog=$dir/$name.bin
# a statically linked runtime makes a binary of 700 KB or more: kept gzipped
if [ ! -f "$dir/$name.bin" ] && [ -f "$dir/$name.bin.gz" ]; then
    gzip -dc "$dir/$name.bin.gz" > "$tmp/$name.bin" || { echo "FAIL: cannot read $dir/$name.bin.gz"; exit 1; }
    prog=$tmp/$name.bin
fi
[ -n "$prog" ] || { echo "FAIL: no $dir/$name.bin and no program given"; exit 1; }
# a recording of the no-GPU path proves nothing a differential test does not
if grep -Eq 'cudaError(InsufficientDriver|NoDevice|StubLibrary)' "$dir/$name.expected"; then
    echo "FAIL: $dir/$name.expected is the no-GPU path (record on a machine with a GPU):"
    sed 's/^/  | /' "$dir/$name.expected"
    exit 1
fi
# NVIDIA's own libcudart.so.13 over the driver stub (NAME.cudart: the sha256
# of the one it was recorded with): that very runtime, from REPLAY_CUDART_DIR
# (the toolkit's), in front of nothing but the stub's libcuda.so.1
if [ -f "$dir/$name.cudart" ]; then
    rt=${REPLAY_CUDART_DIR:-}/libcudart.so.13
    if [ -z "${REPLAY_CUDART_DIR:-}" ] || [ ! -f "$rt" ]; then
        echo "SKIP: $name runs NVIDIA's libcudart.so.13, and REPLAY_CUDART_DIR names no folder with one"
        exit 77
    fi
    want=$(cat "$dir/$name.cudart")
    have=$(sha256sum < "$rt" | cut -d' ' -f1)
    if [ "$want" != "$have" ]; then
        echo "SKIP: $name was recorded with another libcudart.so.13 (sha256 $want) than $rt ($have):"
        echo "  its requests would differ; record it with this toolkit's runtime"
        exit 77
    fi
    mkdir "$tmp/only" && ln -s "$(cd "$stub" && pwd)/libcuda.so.1" "$tmp/only/libcuda.so.1" || exit 1
    stub=$tmp/only:$REPLAY_CUDART_DIR
fi
gzip -dc "$dir/$name.rec.gz" > "$tmp/$name.rec" || { echo "FAIL: cannot read $dir/$name.rec.gz"; exit 1; }
# the binary may have lost its execute bit in git
cp "$prog" "$tmp/$name" && chmod +x "$tmp/$name"
# (not exec: the EXIT trap removes the unpacked recording)
REPLAY_GUEST_UNSET="CUDA_ APIGEN_" sh "$(dirname "$0")/../replay/replay.sh" check "$server" "$stub" \
    "$tmp/$name.rec" "$dir/$name.expected" -- "$tmp/$name"
