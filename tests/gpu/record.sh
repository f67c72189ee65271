#!/bin/sh
# tests/gpu/record.sh: on a machine with an NVIDIA GPU, record every program
# of examples/cuda for the replay tests of CI (tests/cuda/replay.sh; format:
# docs/internals.md "Record and replay").
#
#   tests/gpu/record.sh            (from the repository root; OUT=folder, default ./recordings-out)
#
# Builds the stub, the server and the examples as tests/gpu/run-all.sh does,
# then for each example: runs it natively (its stdout and exit status are the
# expected output), and forwarded over unix:// to apigen-server-cudart
# --record, both under `setarch -R` as the replay runs it. Writes into $OUT:
#   cuda-recordings.tar.gz   per example NAME: NAME.rec.gz (the recording),
#                            NAME.expected + NAME.expected.rc (native stdout and
#                            exit status), NAME.bin (the example binary: CI
#                            replays this very program against the stub it builds,
#                            so the fat binary and host addresses are the recorded ones)
#   record.log               what ran, sizes, and any forwarded run that differed
# NO_BUILD=1 uses BUILD as it is (to try this script on a machine without a GPU).
# Put them in place (one command, from the repository root):
#   tar xzf cuda-recordings.tar.gz -C tests/cuda/recordings
# then `git add tests/cuda/recordings`; cmake picks them up (cuda.replay.NAME).
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 1
build=${BUILD:-build-gpu}
arch=${CUDA_ARCH-native}
out=${OUT:-$root/recordings-out}
if [ -z "${CUDA_HOME:-}" ]; then
    if command -v nvcc >/dev/null 2>&1; then CUDA_HOME=$(dirname "$(dirname "$(command -v nvcc)")")
    else CUDA_HOME=/usr/local/cuda; fi
fi
export CUDA_HOME PATH="$CUDA_HOME/bin:$PATH"
[ -x "$CUDA_HOME/bin/nvcc" ] || { echo "record: no nvcc under CUDA_HOME=$CUDA_HOME"; exit 1; }
reallib=$CUDA_HOME/lib64
[ -e "$reallib/libcudart.so.13" ] || reallib=$CUDA_HOME/targets/$(uname -m)-linux/lib
case $build in /*) ;; *) build=$root/$build ;; esac
mkdir -p "$build" "$out" || exit 1
if [ "${NO_BUILD:-0}" = 1 ]; then # BUILD is built already (checking this script without a GPU)
    echo "== using the build in $build"
else
    echo "== build ($build, -arch=$arch)"
    cmake -S . -B "$build" -DAPIGEN_BUILD_GENERATOR=OFF -DCMAKE_BUILD_TYPE=Release \
          -DCUDAToolkit_ROOT="$CUDA_HOME" -DAPIGEN_CUDA_ARCH="$arch" > "$build/record.configure.log" 2>&1 ||
        { cat "$build/record.configure.log"; exit 1; }
    cmake --build "$build" -j"$(nproc)" --target cudart_stub apigen-server-cudart cuda_examples \
        > "$build/record.build.log" 2>&1 || { tail -n 50 "$build/record.build.log"; exit 1; }
fi
stub=$build/stub
server=$build/examples/cuda/apigen-server-cudart
ex=$build/examples/cuda
work=$(mktemp -d "${TMPDIR:-/tmp}/apigen-record.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/rec"
log=$out/record.log
: > "$log"
norand=
setarch "$(uname -m)" -R true 2>/dev/null && norand="setarch $(uname -m) -R"
command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L | tee -a "$log"
# EXAMPLES: the examples to record (default: all but pageable_copy, whose
# recording of 2026-11-25 was 288 MB gzipped: replies are kept whole)
examples=${EXAMPLES:-$(for f in examples/cuda/*.cu; do e=$(basename "$f" .cu); case $e in pageable_copy) ;; *) echo "$e" ;; esac; done)}
fails=0
for e in $examples; do
    [ -x "$ex/$e" ] || { echo "$e: not built" | tee -a "$log"; fails=$((fails + 1)); continue; }
    cp "$ex/$e" "$work/rec/$e.bin"
    # shellcheck disable=SC2086 # norand: a command and its arguments, or nothing
    env -u APIGEN_SERVER LD_LIBRARY_PATH="$reallib" timeout 300 $norand "$work/rec/$e.bin" \
        > "$work/rec/$e.expected" 2> "$work/$e.native.err"
    echo $? > "$work/rec/$e.expected.rc"
    # the recording, taken by replay.sh (a server of its own, a unix socket)
    if ! REPLAY_TIMEOUT=300 sh tests/replay/replay.sh record "$server" "$stub" "$work/rec/$e.rec" \
            "$work/$e.fwd" -- "$work/rec/$e.bin" >> "$log" 2>&1; then
        echo "$e: recording FAILED (see above)" | tee -a "$log"; fails=$((fails + 1)); continue
    fi
    if ! cmp -s "$work/rec/$e.expected" "$work/$e.fwd" || ! cmp -s "$work/rec/$e.expected.rc" "$work/$e.fwd.rc"; then
        echo "$e: forwarded output differs from native (the replay test will fail until fixed):" | tee -a "$log"
        diff -u "$work/rec/$e.expected" "$work/$e.fwd" | head -40 | tee -a "$log"
        fails=$((fails + 1))
    fi
    if grep -Eq 'cudaError(InsufficientDriver|NoDevice)' "$work/rec/$e.expected"; then
        echo "$e: natively it found no GPU; CI refuses such a recording" | tee -a "$log"; fails=$((fails + 1))
    fi
    gzip -9 -n -f "$work/rec/$e.rec"
    echo "$e: native exit $(cat "$work/rec/$e.expected.rc"), recording $(wc -c < "$work/rec/$e.rec.gz") bytes gzipped" | tee -a "$log"
done
# large replies (device-to-host copies) are kept whole: say which are big
for f in "$work"/rec/*.rec.gz; do
    [ "$(wc -c < "$f")" -gt 1048576 ] && echo "note: $(basename "$f") is $(wc -c < "$f") bytes (over 1 MiB)" | tee -a "$log"
done
tar czf "$out/cuda-recordings.tar.gz" -C "$work/rec" . || exit 1
echo "wrote $out/cuda-recordings.tar.gz ($(wc -c < "$out/cuda-recordings.tar.gz") bytes) and $log" | tee -a "$log"
echo "put in place: tar xzf cuda-recordings.tar.gz -C tests/cuda/recordings" | tee -a "$log"
[ $fails = 0 ]
