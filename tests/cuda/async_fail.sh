#!/bin/sh
# A queued library call that fails on the server reaches the program at the
# documented point (docs/internals.md "Errors of queued calls"). PROGRAM
# (tests/<lib>/async_fail.c) runs over the fakes of tests/<lib>, natively and
# through the stubs to SERVER over TRANSPORT, with the argument "last".
# Checks:
#  - the same stdout and exit 0 both ways (the statuses the program saw, its
#    results: never a success with a wrong result);
#  - a value the library refuses: natively and forwarded the call itself
#    returns the error ("value refused by: the call"); with VALUE_AT=next
#    (environment: a library whose calls are queued without a check)
#    forwarded the library's next call returns it;
#  - a failure no argument shows: natively the call returns it, forwarded the
#    call was queued and the library's next call returns it, the same status
#    (stdout) ("launch failure reported by: the call" / "the next call");
#  - the last such call, after which the program calls only the runtime:
#    natively the call returned status CODE ("last call: CODE"), forwarded it
#    returned 0 (queued) and the server logged "queued call FN failed with
#    CODE" when the thread's connection ended: never dropped silently.
#   async_fail.sh SERVER STUB_DIR TRANSPORT NATIVE_LIBPATH NATIVE_PRELOAD
#                 SERVER_PRELOAD SERVER_LIBPATH FN PROGRAM
# (a PRELOAD or LIBPATH of "-": none)
set -u
server=$1 stubdir=$2 transport=$3 nlib=$4 npre=$5 spre=$6 slib=$7 fn=$8 prog=$9
[ "$nlib" = - ] && nlib=
[ "$npre" = - ] && npre=
[ "$spre" = - ] && spre=
[ "$slib" = - ] && slib=
tmp=$(mktemp -d "${TMPDIR:-/tmp}/async-fail.XXXXXX")
spid=
cleanup() { [ -n "$spid" ] && kill "$spid" 2>/dev/null && wait "$spid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT INT TERM
name=$(basename "$prog")
fail() {
    echo "FAIL: $name over $transport: $*"
    for f in "$tmp"/*; do [ -f "$f" ] && { echo "---- $f"; sed 's/^/  /' "$f" | head -60; }; done
    exit 1
}
LD_PRELOAD=$npre LD_LIBRARY_PATH=$nlib timeout 120 "$prog" last > "$tmp/native.out" 2> "$tmp/native.err"
nrc=$?
case "$transport" in
unix) url="unix://$tmp/s.sock" ;;
tcp) url="tcp://127.0.0.1:0" ;;
shm) url="shm://apigen-async-fail-$$" ;;
*) echo "unknown transport $transport"; exit 2 ;;
esac
LD_PRELOAD=$spre LD_LIBRARY_PATH=$slib "$server" --listen "$url" > "$tmp/server.log" 2>&1 &
spid=$!
i=0
while [ $i -lt 200 ] && ! grep -q listening "$tmp/server.log" 2>/dev/null; do sleep 0.05; i=$((i + 1)); done
grep -q listening "$tmp/server.log" || fail "the server did not start"
[ "$transport" = tcp ] && url=$(sed -n 's/.*listening on \([a-z]*:[^ ]*\) .*/\1/p' "$tmp/server.log" | head -1)
APIGEN_SERVER=$url APIGEN_TIMEOUT_MS=60000 LD_LIBRARY_PATH=$stubdir \
    timeout 120 "$prog" last > "$tmp/fwd.out" 2> "$tmp/fwd.err"
frc=$?
[ "$nrc" = 0 ] && ! grep -qw -e WRONG -e NO "$tmp/native.out" || fail "natively over the fakes: exit $nrc or a wrong result (the fakes are broken)"
[ "$frc" = 0 ] || fail "forwarded exit $frc"
cmp -s "$tmp/native.out" "$tmp/fwd.out" || { diff -u "$tmp/native.out" "$tmp/fwd.out"; fail "outputs differ (a status or a result the program saw)"; }
grep -q "^value refused by: the call$" "$tmp/native.err" || fail "natively the refused value did not fail at the call"
if [ "${VALUE_AT:-call}" = call ]; then
    grep -q "^value refused by: the call$" "$tmp/fwd.err" || fail "forwarded the refused value did not fail at the call (it was queued)"
else
    grep -q "^value refused by: the next call$" "$tmp/fwd.err" || fail "forwarded the refused value (a call queued without a check) did not come with the next call"
fi
grep -q "^launch failure reported by: the call$" "$tmp/native.err" || fail "natively the failing call did not return its error"
grep -q "^launch failure reported by: the next call$" "$tmp/fwd.err" ||
    fail "forwarded the failing call's error did not come with the library's next call (or the call was not queued)"
code=$(sed -n 's/^last call: \([0-9]*\)$/\1/p' "$tmp/native.err")
[ -n "$code" ] && [ "$code" != 0 ] || fail "natively the last failing call returned no error"
grep -q "^last call: 0$" "$tmp/fwd.err" || fail "forwarded the last failing call was not queued"
# the connection ends after the program exits: give the server a moment
i=0
while [ $i -lt 100 ] && ! grep -q "queued call $fn failed with $code," "$tmp/server.log"; do sleep 0.05; i=$((i + 1)); done
grep -q "queued call $fn failed with $code," "$tmp/server.log" ||
    fail "the server did not log the last queued call's error ($fn, $code) that no call returned"
echo "PASS: $name over $transport: identical stdout; a refused value fails at the ${VALUE_AT:-call} call forwarded; a queued failure comes with the next call (natively: the call); the last one, never returned, is in the server's log"
sed 's/^/  | /' "$tmp/native.out"
grep "queued call $fn failed" "$tmp/server.log" | sed 's/^/  log | /'
exit 0
