#!/bin/sh
# tests/gpu/record.sh: on a machine with an NVIDIA GPU, record every program
# of examples/cuda for the replay tests of CI (tests/cuda/replay.sh; format:
# docs/internals.md "Record and replay").
#
#   tests/gpu/record.sh                (from the repository root; OUT=folder, default ./recordings-out)
#   STUB=driver tests/gpu/record.sh    the driver stub's recordings instead
#   STUB=all tests/gpu/record.sh       both
#
# STUB=runtime (the default): the examples as CMake builds them (-cudart
# shared), each run natively (its stdout and exit status are the expected
# output) and forwarded over unix:// to apigen-server-cudart --record, both
# under `setarch -R` as the replay runs it, through build/stub/libcudart.so.13.
# Writes into $OUT:
#   cuda-recordings.tar.gz   per example NAME: NAME.rec.gz (the recording),
#                            NAME.expected + NAME.expected.rc (native stdout and
#                            exit status), NAME.bin (the example binary: CI
#                            replays this very program against the stub it builds,
#                            so the fat binary and host addresses are the recorded ones)
# STUB=driver: each program tests/gpu/driver.sh runs, built with plain nvcc
# (NVIDIA's static runtime linked in: it calls the driver, build/stub/
# libcuda.so.1 here), run natively (the machine's driver) and forwarded to
# apigen-server-cuda --record the same way; and as NAME-cudart the same
# program built with -cudart shared, NVIDIA's libcudart.so.13 over the stub's
# libcuda.so.1 alone (NAME-cudart.cudart holds that runtime's sha256: CI
# replays it only over the very same file, else SKIP; CUDART=0 leaves these
# out). Each recording is then replayed here, as CI will (tests/cuda/
# replay.sh), REPLAY_TRIES times (default 3) as it is and once with the
# program's memory layout moved (tests/replay/shift.c: another machine's
# libraries, or a later stub, move it as much): a recording is packed only
# if its forwarded run printed what the native one did, the native run found
# the GPU, and every replay passed; the others stay in $OUT/driver-left-out/
# with the reason in record.log (LAYOUT_SENSITIVE=keep packs those whose
# replay only failed with the layout moved). Writes into $OUT:
#   cuda-driver-recordings.tar.gz   the same four files per program, the
#                                   binary stripped, as NAME.bin.gz (about 200 KB)
# Both modes write record.log: what ran, sizes, what differed or was left out.
# The forwarded program runs without CUDA_* and APIGEN_* variables (the
# replay runs it so too: they could change what it sends); the native run
# and the server keep the environment (CUDA_VISIBLE_DEVICES).
# NO_BUILD=1 uses BUILD as it is (to try this script on a machine without a GPU;
# RECORD_NATIVE=forwarded with a stand-in device in the server, REPLAY_SERVER_PRELOAD,
# runs it through: tests/cuda/record_script_ci.sh).
# Put them in place (from the repository root):
#   tar xzf cuda-recordings.tar.gz -C tests/cuda/recordings
#   mkdir -p tests/cuda/recordings-driver && tar xzf cuda-driver-recordings.tar.gz -C tests/cuda/recordings-driver
# then `git add` the folder; cmake picks them up (cuda.replay.NAME,
# cuda.replay_driver.NAME).
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 1
build=${BUILD:-build-gpu}
arch=${CUDA_ARCH-native}
out=${OUT:-$root/recordings-out}
stubs=${STUB:-runtime}
case $stubs in runtime | driver) ;; all) stubs="runtime driver" ;;
*) echo "record: STUB=$stubs: runtime, driver or all"; exit 2 ;; esac
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
targets=
for s in $stubs; do
    case $s in
    runtime) targets="$targets cudart_stub apigen-server-cudart cuda_examples" ;;
    driver) targets="$targets cuda_stub apigen-server-cuda replay_shift cuda_examples" ;;
    esac
done
if [ "${NO_BUILD:-0}" = 1 ]; then # BUILD is built already (checking this script without a GPU)
    echo "== using the build in $build"
else
    echo "== build ($build, -arch=$arch)"
    cmake -S . -B "$build" -DAPIGEN_BUILD_GENERATOR=OFF -DCMAKE_BUILD_TYPE=Release \
          -DCUDAToolkit_ROOT="$CUDA_HOME" -DAPIGEN_CUDA_ARCH="$arch" > "$build/record.configure.log" 2>&1 ||
        { cat "$build/record.configure.log"; exit 1; }
    # shellcheck disable=SC2086 # targets: a list
    cmake --build "$build" -j"$(nproc)" --target $targets \
        > "$build/record.build.log" 2>&1 || { tail -n 50 "$build/record.build.log"; exit 1; }
fi
stub=$build/stub
work=$(mktemp -d "${TMPDIR:-/tmp}/apigen-record.XXXXXX")
trap 'rm -rf "$work"' EXIT
log=$out/record.log
: > "$log"
norand=
setarch "$(uname -m)" -R true 2>/dev/null && norand="setarch $(uname -m) -R"
command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L | tee -a "$log"
# EXAMPLES: the examples to record (default: all but pageable_copy, whose
# recording of 2026-11-25 was 288 MB gzipped: replies are kept whole)
default_examples() {
    for f in examples/cuda/*.cu; do
        e=$(basename "$f" .cu)
        case $e in pageable_copy) ;; *) echo "$e" ;; esac
    done
}
examples=${EXAMPLES:-$(default_examples)}
# STUB=driver: the programs tests/gpu/driver.sh runs (all but honest), less pageable_copy
driver_examples=${EXAMPLES:-"vector_add matmul streams constant fault multithread callback graph graph_nodes capture_copy boundary mapped device_printf device_assert managed"}
# the no-GPU path, natively: CI refuses such a recording
nogpu='cudaError(InsufficientDriver|NoDevice|StubLibrary)'
fails=0

# record_one MODE SERVER DIR NAME BINARY NATIVE_LIBPATH [FORWARDED_LIBPATH]:
# NAME's four files into DIR; 0 when the forwarded run printed what the
# native one did. FORWARDED_LIBPATH: the program's library path forwarded
# (default build/stub)
record_one() {
    mode=$1 server=$2 dir=$3 e=$4 bin=$5 nlp=$6 flp=${7:-$stub}
    cp "$bin" "$dir/$e.bin"
    if [ "${RECORD_NATIVE:-}" = forwarded ]; then
        # trying this script without a GPU (tests/cuda/record_script_ci.sh):
        # the "native" run forwarded too, to a server with a stand-in device
        # (REPLAY_SERVER_PRELOAD, REPLAY_SERVER_LIBS)
        REPLAY_GUEST_UNSET="CUDA_ APIGEN_" sh tests/replay/replay.sh record "$server" "$flp" \
            "$work/$mode.$e.native.rec" "$dir/$e.expected" -- "$dir/$e.bin" > "$work/$mode.$e.native.err" 2>&1
    else
        # natively: NLP the library path (empty: none, the machine's driver)
        # shellcheck disable=SC2086 # norand: a command and its arguments, or nothing
        env -u APIGEN_SERVER -u LD_LIBRARY_PATH ${nlp:+LD_LIBRARY_PATH="$nlp"} timeout 300 $norand "$dir/$e.bin" \
            > "$dir/$e.expected" 2> "$work/$mode.$e.native.err"
        echo $? > "$dir/$e.expected.rc"
    fi
    # the recording, taken by replay.sh (a server of its own, a unix socket)
    if ! REPLAY_TIMEOUT=300 REPLAY_GUEST_UNSET="CUDA_ APIGEN_" sh tests/replay/replay.sh record \
            "$server" "$flp" "$dir/$e.rec" "$work/$mode.$e.fwd" -- "$dir/$e.bin" >> "$log" 2>&1; then
        echo "$mode $e: recording FAILED (see above)" | tee -a "$log"; return 1
    fi
    gzip -9 -n -f "$dir/$e.rec"
    echo "$mode $e: native exit $(cat "$dir/$e.expected.rc"), recording $(wc -c < "$dir/$e.rec.gz") bytes gzipped" | tee -a "$log"
    if grep -Eq "$nogpu" "$dir/$e.expected"; then
        echo "$mode $e: natively it found no GPU; CI refuses such a recording" | tee -a "$log"; return 1
    fi
    if ! cmp -s "$dir/$e.expected" "$work/$mode.$e.fwd" || ! cmp -s "$dir/$e.expected.rc" "$work/$mode.$e.fwd.rc"; then
        echo "$mode $e: forwarded output differs from native (exit $(cat "$work/$mode.$e.fwd.rc")); the replay test would fail:" | tee -a "$log"
        diff -u "$dir/$e.expected" "$work/$mode.$e.fwd" | head -40 | tee -a "$log"
        return 1
    fi
    return 0
}

# the runtime stub: examples built by CMake (-cudart shared); every recording packed
if echo "$stubs" | grep -qw runtime; then
    server=$build/examples/cuda/apigen-server-cudart
    ex=$build/examples/cuda
    mkdir -p "$work/rec"
    for e in $examples; do
        [ -x "$ex/$e" ] || { echo "$e: not built" | tee -a "$log"; fails=$((fails + 1)); continue; }
        record_one runtime "$server" "$work/rec" "$e" "$ex/$e" "$reallib" || fails=$((fails + 1))
    done
    # large replies (device-to-host copies) are kept whole: say which are big
    for f in "$work"/rec/*.rec.gz; do
        [ -f "$f" ] && [ "$(wc -c < "$f")" -gt 1048576 ] && echo "note: $(basename "$f") is $(wc -c < "$f") bytes (over 1 MiB)" | tee -a "$log"
    done
    tar czf "$out/cuda-recordings.tar.gz" -C "$work/rec" . || exit 1
    echo "wrote $out/cuda-recordings.tar.gz ($(wc -c < "$out/cuda-recordings.tar.gz") bytes)" | tee -a "$log"
    echo "put in place: tar xzf cuda-recordings.tar.gz -C tests/cuda/recordings" | tee -a "$log"
fi

# the driver stub: the programs tests/gpu/driver.sh runs, built with plain
# nvcc (static runtime), through build/stub/libcuda.so.1; packed only when
# the forwarded run matched and the replay passes here, layout moved or not
if echo "$stubs" | grep -qw driver; then
    server=$build/examples/cuda/apigen-server-cuda
    shiftlib=$build/tests/cuda/libreplay_shift.so
    if ! [ -x "$server" ] || ! [ -e "$stub/libcuda.so.1" ] || ! [ -e "$shiftlib" ]; then
        echo "record: no apigen-server-cuda, libcuda.so.1 or libreplay_shift.so in $build"; exit 1
    fi
    static=$build/record-driver-static
    drec=$work/drv
    left=$out/driver-left-out
    rm -rf "$left"
    mkdir -p "$static" "$drec" "$left"
    # NVIDIA's libcudart.so.13 in front of nothing but the stub's libcuda.so.1
    only=$build/record-driver-only
    mkdir -p "$only" && ln -sf "$stub/libcuda.so.1" "$only/libcuda.so.1"
    cudart_sum=$(sha256sum < "$reallib/libcudart.so.13" | cut -d' ' -f1)
    # check_pack NAME: replays NAME from $work/one here (as it is, then with the
    # layout moved) and packs it, or leaves it out with the reason
    check_pack() {
        n=$1 why=$2
        # REPLAY_TRIES plain replays (default 3: one that passes only now and
        # then, threads racing, would fail in CI now and then)
        i=0
        while [ -z "$why" ] && [ $i -lt "${REPLAY_TRIES:-3}" ]; do
            i=$((i + 1))
            REPLAY_CUDART_DIR=$reallib sh tests/cuda/replay.sh "$server" "$stub" "$work/one" "$n" > "$work/$n.replay" 2>&1 ||
                why="its replay here failed (try $i): $(tail -n 1 "$work/$n.replay")"
        done
        if [ -z "$why" ] && ! REPLAY_CUDART_DIR=$reallib REPLAY_SHIFT=$shiftlib sh tests/cuda/replay.sh "$server" "$stub" "$work/one" "$n" > "$work/$n.replay" 2>&1; then
            echo "driver $n: its replay fails with the program's memory layout moved (a request carries a host address): $(tail -n 1 "$work/$n.replay")" | tee -a "$log"
            [ "${LAYOUT_SENSITIVE:-}" = keep ] || why="layout-sensitive (LAYOUT_SENSITIVE=keep packs it)"
        fi
        if [ -n "$why" ]; then
            echo "driver $n: left out ($why)" | tee -a "$log"
            mkdir -p "$left/$n" && cp "$work"/one/* "$left/$n/"
            cp "$work/driver.$n.fwd" "$left/$n/$n.forwarded" 2>/dev/null
            cp "$work/$n.replay" "$left/$n/$n.replay.log" 2>/dev/null
            fails=$((fails + 1))
            return
        fi
        gzip -9 -n "$work/one/$n.bin" # 700 KB with the static runtime (replay.sh takes NAME.bin.gz)
        cp "$work"/one/* "$drec/"
        echo "driver $n: packed" | tee -a "$log"
    }
    # NAME: built with plain nvcc (the static runtime), all at once
    for e in $driver_examples; do
        # shellcheck disable=SC2086 # the -arch option, or nothing
        # stripped (the symbol table is a third of the gzipped binary; nothing
        # loaded changes) before anything runs it: what CI replays ran here
        { nvcc -std=c++17 -O2 ${arch:+-arch=$arch} -o "$static/$e" "examples/cuda/$e.cu" > "$static/$e.build.log" 2>&1 &&
              strip "$static/$e" >> "$static/$e.build.log" 2>&1
          echo $? > "$static/$e.build.rc"; } &
    done
    wait
    mkdir -p "$work/one"
    for e in $driver_examples; do
        if [ "$(cat "$static/$e.build.rc" 2>/dev/null)" = 0 ]; then
            rm -f "$work"/one/*
            why=
            record_one driver "$server" "$work/one" "$e" "$static/$e" "" || why="recorded, but see above"
            check_pack "$e" "$why"
        else
            echo "driver $e: nvcc failed:" | tee -a "$log"; tail -n 5 "$static/$e.build.log" | tee -a "$log"
            fails=$((fails + 1))
        fi
        # NAME-cudart: the -cudart shared build with NVIDIA's runtime (CUDART=0: not these)
        [ "${CUDART:-1}" = 1 ] || continue
        if [ ! -x "$build/examples/cuda/$e" ]; then
            echo "driver $e-cudart: $build/examples/cuda/$e not built" | tee -a "$log"; fails=$((fails + 1)); continue
        fi
        rm -f "$work"/one/*
        why=
        rn=$e-cudart # (record_one sets e)
        echo "$cudart_sum" > "$work/one/$rn.cudart"
        record_one driver "$server" "$work/one" "$rn" "$build/examples/cuda/$e" "$reallib" "$only:$reallib" ||
            why="recorded, but see above"
        check_pack "$rn" "$why"
    done
    for f in "$drec"/*.rec.gz; do
        [ -f "$f" ] && [ "$(wc -c < "$f")" -gt 1048576 ] && echo "note: $(basename "$f") is $(wc -c < "$f") bytes (over 1 MiB)" | tee -a "$log"
    done
    tar czf "$out/cuda-driver-recordings.tar.gz" -C "$drec" . || exit 1
    n=0
    for f in "$drec"/*.rec.gz; do [ -f "$f" ] && n=$((n + 1)); done
    echo "wrote $out/cuda-driver-recordings.tar.gz ($(wc -c < "$out/cuda-driver-recordings.tar.gz") bytes; $n recordings)" | tee -a "$log"
    echo "put in place: mkdir -p tests/cuda/recordings-driver && tar xzf cuda-driver-recordings.tar.gz -C tests/cuda/recordings-driver" | tee -a "$log"
fi
echo "see $log"
[ $fails = 0 ]
