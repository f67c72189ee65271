#!/bin/sh
# bench/tcp-copy.sh BUILD_DIR [TRANSPORT ...]: large cudaMemcpy over each
# transport (default: tcp) next to the plain-C stream measured in the same
# run (bench/tcp_copy.c prints both and the ratio). With a GPU it runs the
# program natively first and the server on the device; without one (CI, a
# laptop) the server gets tests/cuda/fake_device.c preloaded: the real stub,
# wire and server, the device's copies host memcpys. Prints numbers only.
#
# Environment: SIZES (MiB, default "64 256"), TCP_COPY_ROUNDS (default 3),
# CPUS=GUEST:SERVER (taskset lists: the program and the stream's far end on
# GUEST, the server on SERVER; default unpinned), FAKE=1 (the stand-in
# device even where a GPU is), SERVER_ARGS (extra server options, default
# "--isolation thread" as bench/run-gpu.sh), PERF=1 (then, per transport,
# perf record of the server and the guest during 256 MiB H2D and D2H
# copies, and each side's top symbols), LANES (over tcp, one run per value
# with APIGEN_LANES set to it, e.g. "1 2 4 8": 1 = one connection; default:
# one run with the guest's default, runtime/lanes.c), and any APIGEN_*
# setting (APIGEN_LANE_PIECE, APIGEN_LANES_MIN ...).
set -u
build=${1:?usage: bench/tcp-copy.sh BUILD_DIR [TRANSPORT ...]}
shift
[ $# -gt 0 ] || set -- tcp
build=$(cd "$build" && pwd) || exit 2
prog=$build/bench/bench_tcp_copy
server=$build/examples/cuda/apigen-server-cudart
stubdir=$build/stub
fake=$build/tests/cuda/libcudart_fake_device.so
for f in "$prog" "$server" "$stubdir/libcudart.so.13"; do
    [ -e "$f" ] || { echo "tcp-copy.sh: $f missing (cmake --build $build --target bench_tcp_copy apigen-server-cudart cudart_stub cudart_fake_device)"; exit 2; }
done
gpu=0
[ "${FAKE:-0}" != 1 ] && command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1 && gpu=1
preload=
if [ $gpu = 0 ]; then
    [ -e "$fake" ] || { echo "tcp-copy.sh: no GPU and no $fake"; exit 2; }
    preload=$fake
fi
gcpu='' scpu=''
if [ -n "${CPUS:-}" ]; then
    gcpu=${CPUS%%:*} scpu=${CPUS#*:}
fi
pin() { # pin CPULIST CMD...: taskset when a list is given
    l=$1; shift
    if [ -n "$l" ]; then taskset -c "$l" "$@"; else "$@"; fi
}
# shellcheck disable=SC2086 # SIZES: split on purpose
sizes=${SIZES:-64 256}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tcp-copy.XXXXXX")
spid=
cleanup() { [ -n "$spid" ] && kill "$spid" 2>/dev/null && wait "$spid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT INT TERM
echo "== $(date -u '+%Y-%m-%d %H:%M UTC'), $(uname -n), $(nproc) cores, $([ $gpu = 1 ] && echo GPU || echo 'stand-in device (tests/cuda/fake_device.c)'), CPUS=${CPUS:-unpinned}"
[ $gpu = 1 ] && nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
if [ $gpu = 1 ]; then
    echo "== native"
    # shellcheck disable=SC2086
    TCP_COPY_PEER_CPUS=$scpu pin "$gcpu" "$prog" $sizes || exit 1
fi
rc=0
for tr in "$@"; do
    case $tr in
    tcp) url=tcp://127.0.0.1:0 ;;
    unix) url=unix://$tmp/s.sock ;;
    shm) url=shm://apigen-tcp-copy-$$ ;;
    *) echo "tcp-copy.sh: transport $tr: tcp, unix or shm"; exit 2 ;;
    esac
    : > "$tmp/server.log"
    # the server itself in the background (taskset execs it), so that $! is
    # its pid and the kill below ends it
    tsk=
    [ -n "$scpu" ] && tsk="taskset -c $scpu"
    # shellcheck disable=SC2086 # SERVER_ARGS, tsk: split on purpose
    LD_PRELOAD=$preload $tsk "$server" --listen "$url" ${SERVER_ARGS---isolation thread} \
        > "$tmp/server.log" 2>&1 &
    spid=$!
    i=0
    while [ $i -lt 200 ] && ! grep -q listening "$tmp/server.log"; do sleep 0.05; i=$((i + 1)); done
    [ "$tr" = tcp ] && url=$(sed -n 's/.*listening on \([a-z]*:[^ ]*\) .*/\1/p' "$tmp/server.log" | head -1)
    lanes=-
    [ "$tr" = tcp ] && [ -n "${LANES:-}" ] && lanes=$LANES
    for k in $lanes; do
        if [ "$k" = - ]; then
            echo "== over $tr"
        else
            echo "== over $tr, APIGEN_LANES=$k"
            export APIGEN_LANES=$k
        fi
        # shellcheck disable=SC2086
        APIGEN_SERVER=$url LD_LIBRARY_PATH=$stubdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} \
            TCP_COPY_PEER_CPUS=$scpu pin "$gcpu" "$prog" $sizes || { rc=1; sed 's/^/  server: /' "$tmp/server.log"; }
    done
    if [ "${PERF:-0}" = 1 ] && command -v perf >/dev/null 2>&1; then
        # where the server's and the guest's cycles go in 256 MiB copies (pageable)
        for dir in h2d d2h; do
            perf record -q -g -p "$spid" -o "$tmp/srv.data" > /dev/null 2>&1 &
            ppid=$!
            sleep 0.5
            APIGEN_SERVER=$url LD_LIBRARY_PATH=$stubdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} \
                TCP_COPY_ONLY=$dir pin "$gcpu" perf record -q -g -o "$tmp/guest.data" "$prog" 256
            kill -INT "$ppid" 2>/dev/null
            wait "$ppid" 2>/dev/null
            for side in srv guest; do
                echo "-- perf, $dir over $tr, $side: top symbols (self)"
                perf report -i "$tmp/$side.data" --no-children --sort dso,sym -q -g none 2>/dev/null |
                    grep -v '^$' | head -n 12
            done
        done
    fi
    kill "$spid" 2>/dev/null
    wait "$spid" 2>/dev/null
    spid=
done
exit $rc
