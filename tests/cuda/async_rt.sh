#!/bin/sh
# Queued library calls cost no round trip, and a queued call's error reaches
# the program at its next sync call of that API (api.errors.async:
# next_call). PROGRAM (tests/<lib>/async_loop.c) runs a loop of per-operation
# calls of a CUDA library and then one call the library refuses; natively
# (over the fakes of tests/<lib>) and through the stubs to SERVER over
# TRANSPORT. Checks: the same stdout and exit status (the loop's results,
# the refused call's error, reported once); natively the refused call
# returns it, forwarded the next call does (the call was queued); and the
# guest's trace (APIGEN_TRACE: one "apigen wire [pid]: rt CALL" line per
# round trip) has no round trip for any call of QUEUED (comma-separated) and
# fewer round trips in all than the loop has iterations (or, with MAX_TOTAL,
# at most MAX_TOTAL: a program that also makes set-up calls of the queued
# kinds synchronously, and keeps one round trip per iteration by design).
# A QUEUED entry NAME:N allows N round trips of NAME (`async_repeats`: the
# first call of its values goes sync). REFUSED_AT=call (environment): the
# refused call is one the guest sends synchronously (its values were never
# accepted), so forwarded it returns its error itself, as natively.
#   async_rt.sh SERVER STUB_DIR TRANSPORT NATIVE_LIBPATH NATIVE_PRELOAD
#               SERVER_PRELOAD SERVER_LIBPATH QUEUED PROGRAM [MAX_TOTAL]
# (a PRELOAD or LIBPATH of "-": none)
set -u
server=$1 stubdir=$2 transport=$3 nlib=$4 npre=$5 spre=$6 slib=$7 queued=$8 prog=$9
max_total=${10:-}
[ "$nlib" = - ] && nlib=
[ "$npre" = - ] && npre=
[ "$spre" = - ] && spre=
[ "$slib" = - ] && slib=
tmp=$(mktemp -d "${TMPDIR:-/tmp}/async-rt.XXXXXX")
spid=
cleanup() { [ -n "$spid" ] && kill "$spid" 2>/dev/null && wait "$spid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT INT TERM
name=$(basename "$prog")
fail() {
    echo "FAIL: $name over $transport: $*"
    [ -f "$tmp/guest.trace" ] && { echo "round trips by call:"; sed -n 's/^apigen wire \[[0-9]*\]: rt \([A-Za-z0-9_]*\) .*/\1/p' "$tmp/guest.trace" | sort | uniq -c | sort -rn | sed 's/^/  | /'; }
    for f in "$tmp"/*; do [ -f "$f" ] && { echo "---- $f"; sed 's/^/  /' "$f" | head -60; }; done
    exit 1
}
LD_PRELOAD=$npre LD_LIBRARY_PATH=$nlib timeout 120 "$prog" > "$tmp/native.out" 2> "$tmp/native.err"
nrc=$?
case "$transport" in
unix) url="unix://$tmp/s.sock" ;;
tcp) url="tcp://127.0.0.1:0" ;;
shm) url="shm://apigen-async-rt-$$" ;;
*) echo "unknown transport $transport"; exit 2 ;;
esac
LD_PRELOAD=$spre LD_LIBRARY_PATH=$slib "$server" --listen "$url" > "$tmp/server.log" 2>&1 &
spid=$!
i=0
while [ $i -lt 200 ] && ! grep -q listening "$tmp/server.log" 2>/dev/null; do sleep 0.05; i=$((i + 1)); done
grep -q listening "$tmp/server.log" || fail "the server did not start"
[ "$transport" = tcp ] && url=$(sed -n 's/.*listening on \([a-z]*:[^ ]*\) .*/\1/p' "$tmp/server.log" | head -1)
APIGEN_SERVER=$url APIGEN_TIMEOUT_MS=60000 APIGEN_TRACE=$tmp/guest.trace LD_LIBRARY_PATH=$stubdir \
    timeout 120 "$prog" > "$tmp/fwd.out" 2> "$tmp/fwd.err"
frc=$?
[ "$nrc" = 0 ] && ! grep -qw NO "$tmp/native.out" || fail "natively over the fakes: exit $nrc or a wrong result (the fakes are broken)"
[ "$nrc" = "$frc" ] || fail "native exit $nrc, forwarded exit $frc"
cmp -s "$tmp/native.out" "$tmp/fwd.out" || { diff -u "$tmp/native.out" "$tmp/fwd.out"; fail "outputs differ"; }
grep -q "^reported by: the call$" "$tmp/native.err" || fail "natively the refused call did not return its error"
if [ "${REFUSED_AT:-next}" = call ]; then
    grep -q "^reported by: the call$" "$tmp/fwd.err" || fail "forwarded the refused call returned success (its error came later): it must go sync"
else
    grep -q "^reported by: the next call$" "$tmp/fwd.err" || fail "forwarded the refused call was not queued (it returned its error itself)"
fi
# a program that also queues a runtime call the server refuses: its error
# reaches the runtime's next call while cuBLAS's waits for cuBLAS's
if grep -q "^the runtime's error beside" "$tmp/fwd.err"; then
    grep -q "^the runtime's error beside the queued cuBLAS one: cudaErrorInvalidResourceHandle$" "$tmp/fwd.err" ||
        fail "the queued runtime call's error was lost or misrouted beside the queued cuBLAS error"
fi
loops=$(sed -n 's/^\([0-9][0-9]*\) x (.*/\1/p' "$tmp/fwd.out" | head -1)
[ -n "$loops" ] || fail "no loop line"
total=$(grep -c "apigen wire \[[0-9]*\]: rt " "$tmp/guest.trace")
for e in $(echo "$queued" | tr , ' '); do
    c=${e%%:*} allow=0
    [ "$c" != "$e" ] && allow=${e#*:}
    grep -q "$c(" "$tmp/guest.trace" || fail "$c is not in the guest's trace (the loop did not run forwarded)"
    n=$(grep -c "apigen wire \[[0-9]*\]: rt $c " "$tmp/guest.trace")
    [ "$n" -le "$allow" ] || fail "$c made $n round trips (want at most $allow: queued)"
done
if [ -n "$max_total" ]; then
    [ "$total" -le "$max_total" ] || fail "$total round trips in all (want at most $max_total)"
else
    [ "$total" -lt "$loops" ] || fail "$total round trips for a loop of $loops iterations"
fi
echo "PASS: $name over $transport: identical stdout, exit $nrc; $queued queued, $total round trips in all for $loops iterations; the refused call's error returned by the ${REFUSED_AT:-next} call"
echo "round trips by call (the whole program):"
sed -n 's/^apigen wire \[[0-9]*\]: rt \([A-Za-z0-9_]*\) .*/\1/p' "$tmp/guest.trace" | sort | uniq -c | sort -rn | sed 's/^/  | /'

sed 's/^/  | /' "$tmp/native.out"
exit 0
