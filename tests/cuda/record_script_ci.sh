#!/bin/sh
# tests/cuda/record_script_ci.sh BUILD_DIR NODRIVER_DIR FAKE CUDA_HOME CUDART_DIR
# tests/gpu/record.sh STUB=driver run through without a GPU, as far as it
# goes: the build as it is (NO_BUILD=1), the "native" runs forwarded too
# (RECORD_NATIVE=forwarded) to apigen-server-cuda with the stand-in device of
# tests/cuda/driver/fake_driver.c, for matmul (and matmul-cudart: NVIDIA's
# runtime over the stub) and vector_add. Wants matmul and matmul-cudart
# packed in cuda-driver-recordings.tar.gz with their files, vector_add either
# packed or left out for a reason, and the unpacked matmul recordings to
# replay as CI replays the committed ones (tests/cuda/replay.sh).
set -u
build=$1 nodriver=$2 fake=$3 cuda_home=$4 cudart_dir=$5
root=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cuda-recscript.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
why=
NO_BUILD=1 BUILD="$build" STUB=driver EXAMPLES="matmul vector_add" OUT="$tmp/out" CUDA_ARCH='' \
    RECORD_NATIVE=forwarded REPLAY_SERVER_LIBS="$nodriver" REPLAY_SERVER_PRELOAD="$fake" \
    CUDA_HOME="$cuda_home" sh "$root/tests/gpu/record.sh" > "$tmp/run.log" 2>&1
rc=$?
log=$tmp/out/record.log
tarball=$tmp/out/cuda-driver-recordings.tar.gz
for n in matmul matmul-cudart; do
    [ -z "$why" ] && ! grep -q "^driver $n: packed$" "$log" 2>/dev/null && why="$n was not packed"
done
[ -z "$why" ] && ! grep -Eq "^driver vector_add: (packed|left out \(.+\))$" "$log" && why="no word on vector_add"
if [ -z "$why" ]; then
    mkdir -p "$tmp/rec" && tar xzf "$tarball" -C "$tmp/rec" || why="cannot unpack $tarball"
fi
for f in matmul.rec.gz matmul.bin.gz matmul.expected matmul.expected.rc matmul-cudart.rec.gz \
         matmul-cudart.bin.gz matmul-cudart.cudart; do
    [ -z "$why" ] && [ ! -s "$tmp/rec/$f" ] && why="the tarball lacks $f"
done
for n in matmul matmul-cudart; do
    [ -z "$why" ] || break
    REPLAY_SERVER_LIBS="$nodriver" REPLAY_CUDART_DIR="$cudart_dir" sh "$root/tests/cuda/replay.sh" \
        "$build/examples/cuda/apigen-server-cuda" "$build/stub" "$tmp/rec" "$n" > "$tmp/$n.replay" 2>&1 ||
        why="the packed $n does not replay: $(tail -n 1 "$tmp/$n.replay")"
done
if [ -n "$why" ]; then
    echo "FAIL: record.sh STUB=driver (exit $rc): $why"
    sed 's/^/  | /' "$tmp/run.log"
    exit 1
fi
echo "PASS: record.sh STUB=driver packed matmul and matmul-cudart, which replay (exit $rc: what it left out is a failure there)"
sed 's/^/  | /' "$log"
exit 0
