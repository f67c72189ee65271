#!/bin/sh
# Two APIs of one family (exa and exb, spec api.family) in one process:
# tests/family/family.c natively and through both stubs, one server.
#
#   family.sh MODE BUILD_DIR
#
#   unix|tcp|shm   `exa_family all` natively and forwarded over the transport to
#                  apigen-server-exa-family: same stdout, both exit 0
#   isolation      the same over unix with the server's sessions as processes
#   trace          the server's trace: ONE new session, exb joined it as API 1, and
#                  the guest's connections (control, exb's join, one thread) all of it
#   two_processes  a buffer handle printed by one forwarded process is unknown to
#                  another (EXB_ERROR_INVALID_HANDLE), as natively
#   exa_only       a server of exa alone (apigen-server-exa): exa's calls work, exb's
#                  fail with EXB_ERROR_CONNECTION_LOST and one line naming exb (exb's
#                  call after exa's, and first: then exa's calls open the session)
set -u
MODE=${1:?usage: family.sh MODE BUILD_DIR}
B=$(cd "${2:?usage: family.sh MODE BUILD_DIR}" && pwd)
PROG=$B/tests/family/exa_family
FAMILY_SERVER=$B/tests/family/apigen-server-exa-family
EXA_SERVER=$B/examples/exa/apigen-server-exa
for f in "$PROG" "$FAMILY_SERVER" "$EXA_SERVER" "$B/stub/libexb.so.1" "$B/real/libexb.so.1"; do
    [ -e "$f" ] || { echo "FAIL: missing $f"; exit 1; }
done
TMP=$(mktemp -d "${TMPDIR:-/tmp}/family.XXXXXX")
SPID=
cleanup() {
    [ -n "$SPID" ] && kill "$SPID" 2>/dev/null && wait "$SPID" 2>/dev/null
    rm -rf "$TMP"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; for f in "$TMP"/*.out "$TMP"/*.err "$TMP"/*.log; do [ -s "$f" ] && { echo "---- $f"; cat "$f"; }; done; exit 1; }

# start SERVER URL [ARGS...]: sets URL to the URL the server names (a tcp://
# port 0 becomes the port the kernel picked)
start() {
    srv=$1 url=$2
    shift 2
    env -u LD_LIBRARY_PATH -u APIGEN_SERVER APIGEN_TRACE=${SERVER_TRACE:-} "$srv" --listen "$url" "$@" \
        >"$TMP/server.log" 2>&1 &
    SPID=$!
    i=0
    while [ $i -lt 200 ]; do
        if grep -q "listening on " "$TMP/server.log" 2>/dev/null; then
            URL=$(sed -n 's/.*listening on \([^ ]*\) .*/\1/p' "$TMP/server.log" | head -1)
            return 0
        fi
        kill -0 "$SPID" 2>/dev/null || break
        sleep 0.1
        i=$((i + 1))
    done
    fail "server did not start on $url"
}
native() { # tag args
    tag=$1
    shift
    env -u APIGEN_SERVER LD_LIBRARY_PATH="$B/real" timeout 60 "$PROG" "$@" >"$TMP/$tag.out" 2>"$TMP/$tag.err"
    echo $? >"$TMP/$tag.rc"
}
remote() { # tag args
    tag=$1
    shift
    LD_LIBRARY_PATH="$B/stub" APIGEN_SERVER="$URL" timeout 60 "$PROG" "$@" >"$TMP/$tag.out" 2>"$TMP/$tag.err"
    echo $? >"$TMP/$tag.rc"
}
same() { # what
    [ "$(cat "$TMP/native.rc")" = 0 ] || fail "$1: native run failed"
    [ "$(cat "$TMP/remote.rc")" = 0 ] || fail "$1: forwarded run exited $(cat "$TMP/remote.rc")"
    cmp -s "$TMP/native.out" "$TMP/remote.out" || { diff "$TMP/native.out" "$TMP/remote.out"; fail "$1: output differs"; }
}
# the forwarded program really loads both stubs
LD_LIBRARY_PATH="$B/stub" ldd "$PROG" | grep -q "$B/stub/libexb.so.1" || fail "exa_family does not load the exb stub"
LD_LIBRARY_PATH="$B/stub" ldd "$PROG" | grep -q "$B/stub/libapigen-guest.so.2" || fail "the stubs do not load libapigen-guest.so.2"

case $MODE in
unix | tcp | shm | isolation)
    case $MODE in
    tcp) URL="tcp://127.0.0.1:0" ;; # the kernel picks a free port (a chosen one may be taken)
    shm) URL="shm://apigen-family-$$" ;;
    *) URL="unix://$TMP/s.sock" ;;
    esac
    if [ "$MODE" = isolation ]; then start "$FAMILY_SERVER" "$URL" --isolation process
    else start "$FAMILY_SERVER" "$URL"; fi
    native native all
    remote remote all
    same "$MODE"
    ;;
trace)
    URL="unix://$TMP/s.sock"
    SERVER_TRACE=1 start "$FAMILY_SERVER" "$URL"
    native native all
    remote remote all
    same trace
    kill "$SPID"; wait "$SPID" 2>/dev/null; SPID=
    n=$(grep -c "new session" "$TMP/server.log")
    [ "$n" = 1 ] || fail "trace: $n new sessions, expected one for both APIs"
    grep -q "exb joined the session of exa as its API 1" "$TMP/server.log" || fail "trace: exb did not join exa's session"
    j=$(grep -c "joined session" "$TMP/server.log")
    # exb's join handshake, the one thread's connection
    [ "$j" = 2 ] || fail "trace: $j joined connections, expected 2 (exb's join, the thread's connection)"
    grep -q "server: exb.exbSumDevice" "$TMP/server.log" || fail "trace: no exb call served"
    grep -q "server: exa.exaLaunchFill \[async\]" "$TMP/server.log" || fail "trace: no async exa call served"
    ;;
two_processes)
    URL="unix://$TMP/s.sock"
    start "$FAMILY_SERVER" "$URL"
    h=$(env -u APIGEN_SERVER LD_LIBRARY_PATH="$B/real" "$PROG" create) || fail "native create"
    native native use "$h"
    h=$(LD_LIBRARY_PATH="$B/stub" APIGEN_SERVER="$URL" "$PROG" create) || fail "forwarded create"
    remote remote use "$h"
    same two_processes
    ;;
exa_only)
    URL="unix://$TMP/s.sock"
    start "$EXA_SERVER" "$URL"
    remote remote exa-only
    [ "$(cat "$TMP/remote.rc")" = 0 ] || fail "exa_only: exit $(cat "$TMP/remote.rc")"
    grep -q "^exbGetVersion 5$" "$TMP/remote.out" || fail "exa_only: exbGetVersion did not return EXB_ERROR_CONNECTION_LOST (5)"
    grep -q "exb: server refused the connection: API 'exb' is not served here (server serves: exa)" "$TMP/remote.err" ||
        fail "exa_only: no line naming exb's refusal"
    [ "$(grep -c "exb" "$TMP/remote.err")" = 1 ] || fail "exa_only: more than one line about exb"
    # exb's call first: refused, and exa's calls then open the session
    remote remote exb-first
    [ "$(cat "$TMP/remote.rc")" = 0 ] || fail "exb_first: exit $(cat "$TMP/remote.rc")"
    [ "$(grep -c "^exbGetVersion 5$" "$TMP/remote.out")" = 2 ] || fail "exb_first: exb's calls did not fail with EXB_ERROR_CONNECTION_LOST"
    [ "$(grep -c "exb" "$TMP/remote.err")" = 1 ] || fail "exb_first: not one line about exb"
    ;;
*)
    echo "unknown mode $MODE"
    exit 2
    ;;
esac
echo "ok: family $MODE"
