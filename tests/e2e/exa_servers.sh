#!/usr/bin/env bash
# exa over two servers (APIGEN_SERVER=unix...,tcp|shm...): examples/exa/servers.c.
#   exa_servers.sh BUILD_DIR [tcp|shm]
# Over one server it prints what it prints natively. Over two it sees 4
# devices (server 0's first), each context runs where its device is (the
# servers' traces say so), buffers of two servers in one call get
# EXA_ERROR_INVALID_HANDLE and server 0's device memory filled through a
# context of server 1 EXA_ERROR_INVALID_VALUE; both servers survive.
set -u
B=${1:?usage: exa_servers.sh BUILD_DIR [tcp|shm]}
T=${2:-tcp}
PROG=$B/examples/exa/exa_servers
SERVER=$B/examples/exa/apigen-server-exa
TMP=$(mktemp -d "${TMPDIR:-/tmp}/apigen-exa2.XXXXXX")
PIDS=
cleanup() {
    for p in $PIDS; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
    rm -rf "$TMP"
}
trap cleanup EXIT
start_server() { # NAME TRANSPORT -> URL_<NAME>
    local name=$1 url
    case $2 in
    tcp) url=tcp://127.0.0.1:0 ;;
    shm) url=shm://apigen-exa2-$name-$$ ;;
    *) url=unix://$TMP/$name.sock ;;
    esac
    APIGEN_TRACE=$TMP/$name.trace "$SERVER" --listen "$url" >"$TMP/$name.log" 2>&1 &
    PIDS="$PIDS $!"
    for _ in $(seq 100); do
        grep -q listening "$TMP/$name.log" 2>/dev/null && break
        sleep 0.05
    done
    [ "$2" = tcp ] && url=$(sed -n 's/.*listening on \(tcp:[^ ]*\) .*/\1/p' "$TMP/$name.log" | head -1)
    eval "URL_$name=\$url"
}
fwd() { LD_LIBRARY_PATH=$B/stub APIGEN_SERVER=$1 timeout -k 5 60 "$PROG" >"$TMP/fwd" 2>"$TMP/fwd.err"; }

start_server s0 unix
start_server s1 "$T"
env -u APIGEN_SERVER LD_LIBRARY_PATH=$B/real "$PROG" >"$TMP/native" 2>&1
fwd "$URL_s0"
diff -u "$TMP/native" "$TMP/fwd" || { echo "FAIL: over one server"; cat "$TMP/fwd.err"; exit 1; }
: >"$TMP/s0.trace"
: >"$TMP/s1.trace"
fwd "$URL_s0,$URL_s1"
cat >"$TMP/want" <<'W'
devices: 4 (EXA_SUCCESS)
device 0: exa-cpu0, 4 units; context ctx0: EXA_SUCCESS, sum 32640
device 1: exa-cpu1, 8 units; context ctx1: EXA_SUCCESS, sum 288640
device 2: exa-cpu0, 4 units; context ctx2: EXA_SUCCESS, sum 544640
device 3: exa-cpu1, 8 units; context ctx3: EXA_SUCCESS, sum 800640
exaSumBuffers(first, {first, last}): EXA_ERROR_INVALID_HANDLE
exaLaunchFill(last context, memory of server 0): EXA_ERROR_INVALID_VALUE
done
W
diff -u "$TMP/want" "$TMP/fwd" || { echo "FAIL: over two servers"; cat "$TMP/fwd.err"; exit 1; }
# contexts 0 and 1 were created by server 0, 2 and 3 by server 1
c0=$(grep -c 'exa.exaCreateContext -> ok' "$TMP/s0.trace")
c1=$(grep -c 'exa.exaCreateContext -> ok' "$TMP/s1.trace")
[ "$c0" = 2 ] && [ "$c1" = 2 ] ||
    { echo "FAIL: contexts by server: $c0 on server 0, $c1 on server 1 (want 2 and 2)"; exit 1; }
for p in $PIDS; do kill -0 "$p" 2>/dev/null || { echo "FAIL: a server died"; exit 1; }; done
echo "PASS: exa over unix + $T: 4 devices in order, contexts on their servers, mixed servers refused"
