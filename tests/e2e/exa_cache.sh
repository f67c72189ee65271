#!/usr/bin/env bash
# Answers kept in the guest (spec `cache:`): examples/exa/cache.c asks
# exaGetVersion, exaGetDeviceCount and exaGetDeviceInfo again and again.
#   exa_cache.sh BUILD_DIR [tcp|shm]   (the second server's transport)
# Over one server the output is the native one, and each distinct request
# reaches the server once per session: the errors (an invalid device) every
# time, since exa's last error must see them, and the fork child's first
# question too (its own session). Over two servers (4 devices) each server
# is asked its own devices once: the same request bytes (local ordinal 0)
# answered by server 0 are not server 1's answer.
set -u
B=${1:?usage: exa_cache.sh BUILD_DIR [tcp|shm]}
T=${2:-tcp}
PROG=$B/examples/exa/exa_cache
SERVER=$B/examples/exa/apigen-server-exa
TMP=$(mktemp -d "${TMPDIR:-/tmp}/apigen-exacache.XXXXXX")
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
    shm) url=shm://apigen-exacache-$name-$$ ;;
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
fwd() {
    : >"$TMP/s0.trace"
    : >"$TMP/s1.trace"
    LD_LIBRARY_PATH=$B/stub APIGEN_SERVER=$1 APIGEN_TRACE=$TMP/guest.trace \
        timeout -k 5 60 "${PROG}" >"$TMP/fwd" 2>"$TMP/fwd.err" ||
        { echo "FAIL: the forwarded run exited $?"; cat "$TMP/fwd.err"; exit 1; }
}
calls() { grep -c "server: exa\.$2 " "$TMP/$1.trace"; } # SERVER FUNCTION
want() { # SERVER FUNCTION COUNT WHY
    local got
    got=$(calls "$1" "$2")
    [ "$got" = "$3" ] || { echo "FAIL: $2 reached $1 $got times, want $3 ($4)"; exit 1; }
}

start_server s0 unix
start_server s1 "$T"
env -u APIGEN_SERVER LD_LIBRARY_PATH=$B/real "$PROG" >"$TMP/native" 2>&1 ||
    { echo "FAIL: the native run"; cat "$TMP/native"; exit 1; }

rm -f "$TMP/guest.trace"
fwd "$URL_s0"
diff -u "$TMP/native" "$TMP/fwd" || { echo "FAIL: over one server"; exit 1; }
want s0 exaGetVersion 1 "asked 3 times, kept after the first"
want s0 exaGetDeviceCount 1 "asked 3 times, kept after the first"
# 2 devices once each, device 99 twice (an error: never kept), a NULL
# out pointer once (another request), the fork child's device 0 once
want s0 exaGetDeviceInfo 6 "kept answers, errors asked each time, the child's own session"
want s0 exaGetLastError 2 "never kept"
grep -q 'exaGetDeviceInfo(device=1, .*\[cached' "$TMP/guest.trace" ||
    { echo "FAIL: the guest's trace shows no cached exaGetDeviceInfo"; exit 1; }

# APIGEN_CACHE=0: nothing kept, every call reaches the server (what the
# kept answers saved: 10 of the 18 round trips of these three functions)
rm -f "$TMP/guest.trace"
APIGEN_CACHE=0 fwd "$URL_s0"
diff -u "$TMP/native" "$TMP/fwd" || { echo "FAIL: over one server, APIGEN_CACHE=0"; exit 1; }
want s0 exaGetVersion 3 "APIGEN_CACHE=0: every call"
want s0 exaGetDeviceCount 3 "APIGEN_CACHE=0: every call"
want s0 exaGetDeviceInfo 12 "APIGEN_CACHE=0: every call"
! grep -q '\[cached' "$TMP/guest.trace" || { echo "FAIL: APIGEN_CACHE=0 and a cached answer"; exit 1; }

# The thread's current device (api.thread_state): known from the calls that
# set it, answered in the guest; a second thread has its own; unset, it is
# asked again. 12 exaGetCurrentDevice calls, 4 reach the server: each
# thread's first, the one after the unset, the NULL pointer.
rm -f "$TMP/guest.trace"
env -u APIGEN_SERVER LD_LIBRARY_PATH=$B/real "$B/examples/exa/exa_thread_state" >"$TMP/native.ts" 2>&1 ||
    { echo "FAIL: the native thread_state run"; cat "$TMP/native.ts"; exit 1; }
PROG=$B/examples/exa/exa_thread_state fwd "$URL_s0"
diff -u "$TMP/native.ts" "$TMP/fwd" || { echo "FAIL: thread state over one server"; exit 1; }
want s0 exaGetCurrentDevice 4 "each thread's first, after the unset, the NULL pointer"
want s0 exaSetCurrentDevice 4 "never answered in the guest"
[ "$(grep -c 'exaGetCurrentDevice(.*\[cached' "$TMP/guest.trace")" = 8 ] ||
    { echo "FAIL: the guest's trace does not show 8 answered exaGetCurrentDevice calls"; exit 1; }
rm -f "$TMP/guest.trace"
APIGEN_CACHE=0 PROG=$B/examples/exa/exa_thread_state fwd "$URL_s0"
diff -u "$TMP/native.ts" "$TMP/fwd" || { echo "FAIL: thread state, APIGEN_CACHE=0"; exit 1; }
want s0 exaGetCurrentDevice 12 "APIGEN_CACHE=0: every call"

rm -f "$TMP/guest.trace"
fwd "$URL_s0,$URL_s1"
cat >"$TMP/want" <<'W'
count 4 (EXA_SUCCESS), version 1.2 (EXA_SUCCESS)
count 4 (EXA_SUCCESS), version 1.2 (EXA_SUCCESS)
count 4 (EXA_SUCCESS), version 1.2 (EXA_SUCCESS)
parent: device 0: exa-cpu0, 4 units, 1073741824 bytes
parent: device 1: exa-cpu1, 8 units, 2147483648 bytes
parent: device 2: exa-cpu0, 4 units, 1073741824 bytes
parent: device 3: exa-cpu1, 8 units, 2147483648 bytes
parent: device 0: exa-cpu0, 4 units, 1073741824 bytes
parent: device 1: exa-cpu1, 8 units, 2147483648 bytes
parent: device 2: exa-cpu0, 4 units, 1073741824 bytes
parent: device 3: exa-cpu1, 8 units, 2147483648 bytes
parent: device 0: exa-cpu0, 4 units, 1073741824 bytes
parent: device 1: exa-cpu1, 8 units, 2147483648 bytes
parent: device 2: exa-cpu0, 4 units, 1073741824 bytes
parent: device 3: exa-cpu1, 8 units, 2147483648 bytes
parent: device 99: EXA_ERROR_INVALID_VALUE
parent: device 99: EXA_ERROR_INVALID_VALUE
no out pointer: EXA_ERROR_INVALID_VALUE
child: device 0: exa-cpu0, 4 units, 1073741824 bytes
child: device 0: exa-cpu0, 4 units, 1073741824 bytes
parent: device 0: exa-cpu0, 4 units, 1073741824 bytes
done
W
# (the last error is left out here: device 99's error is server 1's, and
# exaGetLastError, which names no device, asks the current server, 0: a
# limit of last errors over several servers that has nothing to do with
# kept answers)
grep -v '^last error' "$TMP/fwd" >"$TMP/fwd2"
diff -u "$TMP/want" "$TMP/fwd2" || { echo "FAIL: over two servers"; cat "$TMP/fwd.err"; exit 1; }
# server 0: its devices 0 and 1 once, the NULL out pointer, the child's
# device 0; server 1: its devices (local 0 and 1: the same request bytes as
# server 0's, answered by server 1 itself) and device 99 twice (past the
# last device: the last server's own error)
want s0 exaGetDeviceInfo 4 "server 0's devices, the NULL pointer, the child"
want s1 exaGetDeviceInfo 4 "server 1's own devices (not server 0's kept answers), device 99 twice"
want s0 exaGetVersion 1 "one per server"
want s1 exaGetVersion 0 "exaGetVersion names no device: the current server (0)"
for p in $PIDS; do kill -0 "$p" 2>/dev/null || { echo "FAIL: a server died"; exit 1; }; done
echo "PASS: exa's kept answers over unix + $T: native output, one round trip per distinct request and server, errors and new sessions asked again"
