#!/bin/sh
# tests/cuda/driver_events_ci.sh SERVER STUB_DIR NODRIVER FAKE PROGRAM TRANSPORT
# tests/cuda/driver/events_ci.c natively over the stand-in driver FAKE and
# forwarded through the driver stub: the outputs must be identical (every
# refusal the driver's, at the call), and the loop phase (between the
# program's two cuCtxSynchronize markers) must have made no round trip for
# cuEventCreate or cuEventDestroy_v2 (specs/cuda/events.c queues them), and
# the records after the process made an interprocess event one each: the
# guest's trace has one "apigen wire" line per round trip.
set -u
server=$1 stubdir=$2 nodriver=$3 fake=$4 prog=$5 transport=$6
rounds=50
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cuda-events.XXXXXX")
spid=
cleanup() { [ -n "$spid" ] && kill "$spid" 2>/dev/null && wait "$spid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT INT TERM
fail() {
    echo "FAIL: events_ci over $transport: $*"
    for f in "$tmp"/*.out "$tmp"/*.err "$tmp"/server.log; do [ -f "$f" ] && { echo "---- $f"; sed 's/^/  /' "$f" | tail -60; }; done
    exit 1
}
LD_PRELOAD=$fake LD_LIBRARY_PATH="$nodriver" timeout 60 "$prog" $rounds > "$tmp/native.out" 2> "$tmp/native.err" ||
    fail "natively over the stand-in: exit $? (the stand-in is broken)"
case "$transport" in
unix) url="unix://$tmp/s.sock" ;;
tcp) url="tcp://127.0.0.1:0" ;;
shm) url="shm://apigen-events-$$" ;;
*) echo "unknown transport $transport"; exit 2 ;;
esac
LD_PRELOAD=$fake LD_LIBRARY_PATH="$nodriver" "$server" --listen "$url" > "$tmp/server.log" 2>&1 &
spid=$!
i=0
while [ $i -lt 200 ] && ! grep -q listening "$tmp/server.log" 2>/dev/null; do sleep 0.05; i=$((i + 1)); done
grep -q listening "$tmp/server.log" || fail "the server did not start"
[ "$transport" = tcp ] && url=$(sed -n 's/.*listening on \([a-z]*:[^ ]*\) .*/\1/p' "$tmp/server.log" | head -1)
APIGEN_TRACE="$tmp/trace" APIGEN_SERVER=$url APIGEN_TIMEOUT_MS=60000 LD_LIBRARY_PATH="$stubdir" \
    timeout 60 "$prog" $rounds > "$tmp/fwd.out" 2> "$tmp/fwd.err" || fail "forwarded: exit $?"
cmp -s "$tmp/native.out" "$tmp/fwd.out" ||
    { diff -u "$tmp/native.out" "$tmp/fwd.out"; fail "forwarded answers differ from native"; }
# the round trips between the markers: the first marker's own line ends phase 0
trips() { # FUNCTION [PHASE]
    awk -v f="rt $1 " -v p="${2:-1}" '/apigen wire.* rt cuCtxSynchronize / { phase++; next }
        phase == p && index($0, f) { n++ } END { print n + 0 }' "$tmp/trace"
}
c=$(trips cuEventCreate) d=$(trips cuEventDestroy_v2)
all=$(awk '/apigen wire.* rt cuCtxSynchronize / { phase++; next } phase == 1 && /apigen wire/ { n++ } END { print n + 0 }' "$tmp/trace")
[ "$c" = 0 ] && [ "$d" = 0 ] ||
    fail "in $rounds rounds of create/record/destroy, cuEventCreate made $c round trips, cuEventDestroy_v2 $d (want 0: queued)"
# after an interprocess event was made, every record is a round trip (phase
# 3: between the third and fourth markers), so another process that waits on
# it finds the record made (specs/cuda/events.c)
r=$(trips cuEventRecord 3)
[ "$r" = $rounds ] ||
    fail "$rounds records after the process made an interprocess event made $r round trips (want $rounds: synchronous)"
[ "$(trips cuEventRecord 1)" = 0 ] || fail "records in the first loop made round trips (want 0: queued)"
echo "PASS: events_ci over $transport: native and forwarded identical ($(wc -l < "$tmp/fwd.out") lines);"
echo "  round trips in the loop of $rounds rounds (4 creates/destroys each, 2 records): $all"
exit 0
