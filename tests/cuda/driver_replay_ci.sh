#!/bin/sh
# tests/cuda/driver_replay_ci.sh MODE SERVER STUB_DIR NODRIVER_DIR FAKE SHIFT PROGRAM [OTHER|CUDART_DIR]
# The record -> replay pipeline of driver-stub programs (a program built with
# plain nvcc: NVIDIA's static runtime in the program, calling
# build/stub/libcuda.so.1), end to end without a GPU: apigen-server-cuda with
# the stand-in device of tests/cuda/driver/fake_driver.c preloaded (FAKE; the
# toolkit's stubs library as libcuda.so.1 under it, NODRIVER_DIR) records
# PROGRAM forwarded, exactly as tests/gpu/record.sh does on the GPU machine
# (STUB=driver); the forwarded run must compute right (exit 0, and a line
# that matches WANT, default "^PASSED$");
# the recording is packed as the GPU recordings are (NAME.rec.gz,
# NAME.expected, NAME.expected.rc, NAME.bin.gz) and replayed by the script that
# replays the committed ones (tests/cuda/replay.sh), the server without the
# stand-in. MODE:
#   check   the replay, in an environment unlike the recording's (a large
#           variable moves the stack, CUDA_ and APIGEN_ variables are set),
#           must pass: what the static runtime sends does not depend on them
#   layout  the same with SHIFT (tests/replay/shift.c) preloaded: the
#           program's mappings and heap blocks move, as another machine's
#           libraries move them. Passes only for a program whose requests
#           carry no host address (vector_add's cudaMemcpyDefault makes the
#           static runtime ask cuPointerGetAttribute about a host buffer:
#           the stub answers that in the guest, docs/internals.md "Record
#           and replay")
#   other   OTHER (another program) replayed against PROGRAM's recording
#           must fail at the first request that differs: the replay has teeth
#   cudart  as check, PROGRAM built with -cudart shared: NVIDIA's
#           libcudart.so.13 from CUDART_DIR over the stub's libcuda.so.1 alone
#           (NAME.cudart holds the runtime's sha256, as record.sh packs it)
set -u
mode=$1 server=$2 stub=$3 nodriver=$4 fake=$5 shift_lib=$6 prog=$7 other=${8:-}
cudart=
[ "$mode" = cudart ] && cudart=$other
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cuda-drvrec.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
name=$(basename "$prog")
mkdir -p "$tmp/rec"
cp "$prog" "$tmp/rec/$name.bin"
guestlibs=$stub
if [ -n "$cudart" ]; then # the stub's libcuda.so.1 alone in front of NVIDIA's runtime
    [ -f "$cudart/libcudart.so.13" ] || { echo "FAIL: no libcudart.so.13 in $cudart"; exit 1; }
    mkdir "$tmp/only" && ln -s "$(cd "$stub" && pwd)/libcuda.so.1" "$tmp/only/libcuda.so.1" || exit 1
    guestlibs=$tmp/only:$cudart
    sha256sum < "$cudart/libcudart.so.13" | cut -d' ' -f1 > "$tmp/rec/$name.cudart"
fi
# recorded as tests/gpu/record.sh records (a server of its own, unix, setarch -R)
if ! REPLAY_SERVER_LIBS="$nodriver" REPLAY_SERVER_PRELOAD="$fake" REPLAY_GUEST_UNSET="CUDA_ APIGEN_" \
        sh "$here/../replay/replay.sh" record "$server" "$guestlibs" "$tmp/rec/$name.rec" \
        "$tmp/rec/$name.expected" -- "$tmp/rec/$name.bin" > "$tmp/record.log" 2>&1; then
    echo "FAIL: recording $name against the stand-in device:"; sed 's/^/  /' "$tmp/record.log"
    exit 1
fi
want=${WANT:-^PASSED\$}
if [ "$(cat "$tmp/rec/$name.expected.rc")" != 0 ] || ! grep -q "$want" "$tmp/rec/$name.expected"; then
    echo "FAIL: $name forwarded to the stand-in device: exit $(cat "$tmp/rec/$name.expected.rc"), want 0 and a line matching $want:"
    sed 's/^/  | /' "$tmp/rec/$name.expected"
    sed 's/^/  /' "$tmp/record.log"
    exit 1
fi
gzip -9 -n "$tmp/rec/$name.rec" "$tmp/rec/$name.bin" || exit 1 # as record.sh packs them
sed 's/^/  | /' "$tmp/rec/$name.expected"
case $mode in
check|layout|cudart)
    # another machine: a longer environment (the stack moves), variables the
    # recording machine's shell might have set (replay.sh removes them from
    # the program), and for layout its mappings and heap blocks moved
    shift=
    [ "$mode" = layout ] && shift=$shift_lib
    big=$(printf '%4096s' '' | tr ' ' x)
    # (APIGEN_CACHE=0 alone would make the stub ask what it keeps: another
    # request at the first cached answer, had replay.sh left it in)
    if APIGEN_REPLAY_CI_PAD=$big CUDA_MODULE_LOADING=EAGER APIGEN_CACHE=0 APIGEN_TRACE=1 REPLAY_SHIFT=$shift \
            REPLAY_SERVER_LIBS="$nodriver" REPLAY_CUDART_DIR=$cudart \
            sh "$here/replay.sh" "$server" "$stub" "$tmp/rec" "$name" \
            > "$tmp/replay.log" 2>&1; then
        cat "$tmp/replay.log"
        exit 0
    fi
    echo "FAIL: $name replayed in another environment${shift:+, its memory layout moved}:"
    sed 's/^/  /' "$tmp/replay.log"
    exit 1 ;;
other)
    [ -n "$other" ] || { echo "driver_replay_ci.sh other: no OTHER program"; exit 2; }
    rm "$tmp/rec/$name.bin.gz" # replay.sh runs NAME.bin(.gz) when there is one
    REPLAY_SERVER_LIBS="$nodriver" sh "$here/replay.sh" "$server" "$stub" "$tmp/rec" "$name" "$other" \
        > "$tmp/replay.log" 2>&1
    rc=$?
    sed 's/^/  | /' "$tmp/replay.log" | tail -12
    [ $rc != 0 ] || { echo "FAIL: $(basename "$other") replayed against $name's recording passed"; exit 1; }
    grep -q "FAIL replay: .*request [0-9]* (recorded" "$tmp/replay.log" ||
        { echo "FAIL: $(basename "$other") against $name's recording failed, but not at a request"; exit 1; }
    echo "PASS: $(basename "$other") against $name's recording fails at the first request that differs"
    exit 0 ;;
*)
    echo "driver_replay_ci.sh: unknown mode $mode"; exit 2 ;;
esac
