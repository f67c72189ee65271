#!/usr/bin/env bash
# Two OpenCL servers behind one guest (APIGEN_SERVER=url0,url1), on the
# system's OpenCL (PoCL in CI). Server 0 runs PoCL's pthread device, server
# 1 its basic device, so every answer says which server gave it.
#   servers_e2e.sh MODE BUILD_DIR TRANSPORT_OF_SERVER_1 (tcp|shm|unix)
# MODE:
#   list    the guest sees 2 platforms, server 0's first (clinfo -l when
#           installed: the two native listings, renumbered)
#   run     examples on platform 0 and 1 (OCL_PLATFORM_INDEX) forwarded vs
#           natively: identical; each server's trace shows only its own
#           platform's enqueues
#   mixed   ocl_servers: objects of both servers in one call get OpenCL's
#           invalid-object errors; both servers serve afterwards
#   down    server 0 unreachable: one log line naming it, the guest sees
#           server 1's platform and runs on it
set -u
MODE=${1:?usage: servers_e2e.sh MODE BUILD_DIR TRANSPORT}
B=${2:?}
T=${3:-tcp}
STUB=$B/stub-opencl
SERVER=$B/examples/opencl/apigen-server-opencl
EX=$B/examples/opencl
TMP=$(mktemp -d "${TMPDIR:-/tmp}/apigen-ocl2.XXXXXX")
PIDS=
cleanup() {
    for p in $PIDS; do
        kill "$p" 2>/dev/null
        wait "$p" 2>/dev/null
    done
    rm -rf "$TMP"
}
trap cleanup EXIT
export POCL_CACHE_DIR=$TMP/pocl-cache
export POCL_MEMORY_LIMIT=${POCL_MEMORY_LIMIT:-4} # clinfo's memory lines stay put under load
DEV0=pthread
DEV1=basic
# PoCL's basic device hangs natively in ocl_events (a PoCL bug): examples run
# on two pthread devices, told apart by the servers' traces
[ "$MODE" = run ] && DEV1=pthread

start_server() { # NAME TRANSPORT DEVICE -> sets URL_<NAME>
    local name=$1 url
    case $2 in
    tcp) url=tcp://127.0.0.1:0 ;;
    shm) url=shm://apigen-ocl2-$name-$$ ;;
    *) url=unix://$TMP/$name.sock ;;
    esac
    env -u LD_LIBRARY_PATH POCL_DEVICES=$3 APIGEN_TRACE=$TMP/$name.trace "$SERVER" \
        --listen "$url" >"$TMP/$name.log" 2>&1 &
    PIDS="$PIDS $!"
    for _ in $(seq 100); do
        grep -q listening "$TMP/$name.log" 2>/dev/null && break
        sleep 0.05
    done
    [ "$2" = tcp ] && url=$(sed -n 's/.*listening on \(tcp:[^ ]*\) .*/\1/p' "$TMP/$name.log" | head -1)
    eval "URL_$name=\$url"
}

alive() {
    for p in $PIDS; do
        kill -0 "$p" 2>/dev/null || { echo "FAIL: a server died"; cat "$TMP"/*.log; exit 1; }
    done
}

native() { env -u LD_LIBRARY_PATH POCL_DEVICES=$1 "${@:2}"; }
fwd() { APIGEN_SERVER=$SERVERS LD_LIBRARY_PATH=$STUB APIGEN_TIMEOUT_MS=60000 "$@"; }

start_server s0 unix $DEV0
start_server s1 "$T" $DEV1
SERVERS=$URL_s0,$URL_s1

case $MODE in
list)
    fwd "$EX/ocl_servers" >"$TMP/out" 2>"$TMP/err"
    head -1 "$TMP/out" | grep -qx 'platforms: 2' ||
        { echo "FAIL: the guest does not see 2 platforms"; cat "$TMP/out" "$TMP/err"; exit 1; }
    if command -v clinfo >/dev/null; then
        { native $DEV0 clinfo -l; native $DEV1 clinfo -l | sed 's/^Platform #0:/Platform #1:/'; } \
            >"$TMP/want" 2>&1
        fwd clinfo -l >"$TMP/got" 2>&1
        diff -u "$TMP/want" "$TMP/got" || { echo "FAIL: clinfo -l over two servers"; exit 1; }
        fwd clinfo >"$TMP/full" 2>&1 || { echo "FAIL: clinfo"; tail "$TMP/full"; exit 1; }
        n=$(sed -n 's/^Number of platforms *\([0-9]*\)/\1/p' "$TMP/full")
        [ "$n" = 2 ] || { echo "FAIL: clinfo shows $n platforms"; exit 1; }
    fi
    alive
    echo "PASS: 2 platforms over unix + $T, server 0's first"
    ;;
run)
    for prog in vecadd events matmul; do
        for i in 0 1; do
            dev=$DEV0
            [ $i = 1 ] && dev=$DEV1
            : >"$TMP/s0.trace"
            : >"$TMP/s1.trace"
            native $dev "$EX/ocl_$prog" >"$TMP/native" 2>&1
            nrc=$?
            fwd env OCL_PLATFORM_INDEX=$i "$EX/ocl_$prog" >"$TMP/fwd" 2>"$TMP/fwd.err"
            frc=$?
            if [ $nrc != $frc ] || ! diff -u "$TMP/native" "$TMP/fwd"; then
                echo "FAIL: ocl_$prog on platform $i (rc $frc) differs from native $dev (rc $nrc)"
                cat "$TMP/fwd.err"
                exit 1
            fi
            other=$((1 - i))
            n=$(grep -c clEnqueue "$TMP/s$i.trace")
            m=$(grep -c clEnqueue "$TMP/s$other.trace")
            if [ "$n" = 0 ] || [ "$m" != 0 ]; then
                echo "FAIL: ocl_$prog on platform $i: $n enqueues on server $i, $m on server $other"
                exit 1
            fi
        done
        echo "ok: ocl_$prog on platform 0 and 1 identical to native $DEV0 and $DEV1"
    done
    alive
    echo "PASS: examples run on either server's platform (unix + $T)"
    ;;
mixed)
    fwd "$EX/ocl_servers" >"$TMP/fwd" 2>"$TMP/fwd.err"
    cat >"$TMP/want" <<'W'
platforms: 2
clEnqueueWriteBuffer(q[1], buf[0], CL_TRUE, 0, 4, &host, 0, NULL, NULL) = -38
clEnqueueReadBuffer(q[1], buf[0], CL_TRUE, 0, 4, &host, 0, NULL, NULL) = -38
clEnqueueCopyBuffer(q[1], buf[1], buf[0], 0, 0, 4, 0, NULL, NULL)  = -38
clEnqueueMarkerWithWaitList(q[1], 1, &e0, NULL)                    = -57
clSetKernelArg(k[1], 0, sizeof buf[0], &buf[0])                    = -38
err_of((clCreateCommandQueue(ctx[0], dev[1], 0, &err), &err))      = -33
err_of((clCreateContext(NULL, 2, dev, NULL, NULL, &err), &err))    = -33
roundtrip(q[0], buf[0], 41)                                        = 0
roundtrip(q[1], buf[1], 42)                                        = 0
done
W
    diff -u "$TMP/want" "$TMP/fwd" || { echo "FAIL: mixed servers"; cat "$TMP/fwd.err"; exit 1; }
    alive
    echo "PASS: objects of two servers in one call: OpenCL's invalid-object errors; both serve"
    ;;
down)
    SERVERS=unix://$TMP/nobody.sock,$URL_s1
    native $DEV1 "$EX/ocl_vecadd" >"$TMP/native" 2>&1
    fwd env OCL_PLATFORM_INDEX=0 "$EX/ocl_vecadd" >"$TMP/fwd" 2>"$TMP/fwd.err"
    diff -u "$TMP/native" "$TMP/fwd" ||
        { echo "FAIL: with server 0 down, server 1's platform"; cat "$TMP/fwd.err"; exit 1; }
    n=$(grep -c 'lost connection to server 0 (unix://.*nobody.sock)' "$TMP/fwd.err")
    [ "$n" = 1 ] || { echo "FAIL: $n log lines name the unreachable server"; cat "$TMP/fwd.err"; exit 1; }
    fwd "$EX/ocl_servers" >"$TMP/out" 2>/dev/null
    head -1 "$TMP/out" | grep -qx 'platforms: 1' || { echo "FAIL: platforms"; cat "$TMP/out"; exit 1; }
    alive
    echo "PASS: server 0 unreachable: '$(grep -o 'lost connection.*' "$TMP/fwd.err")'; server 1 serves"
    ;;
*)
    echo "unknown mode $MODE"
    exit 2
    ;;
esac
