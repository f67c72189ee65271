#!/bin/sh
# A memoized query (spec `cache: {contents:}`): PROGRAM (memo_loop.c) asks
# cuBLASLt's heuristic again and again about descriptors that hold the same
# values, and about changed ones. Natively (over the fakes), forwarded, and
# forwarded with APIGEN_CACHE=0 the stdout must be the same (every answer,
# the changed ones included). Forwarded, the guest's trace (APIGEN_TRACE:
# one "apigen wire [pid]: rt CALL" line per round trip) must hold exactly as
# many round trips of the heuristic as the program says questions a
# memoizing stub sends ("questions: N" on stderr), plus at most one in 16
# of the others (asked again while calls are queued), and the other calls
# marked [cached]; with APIGEN_CACHE=0, one per call ("calls: C").
#   memo.sh SERVER STUB_DIR TRANSPORT NATIVE_LIBPATH PRELOAD PROGRAM
set -u
server=$1 stubdir=$2 transport=$3 nlib=$4 pre=$5 prog=$6
fn=cublasLtMatmulAlgoGetHeuristic
tmp=$(mktemp -d "${TMPDIR:-/tmp}/memo.XXXXXX")
spid=
cleanup() { [ -n "$spid" ] && kill "$spid" 2>/dev/null && wait "$spid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT INT TERM
name=$(basename "$prog")
fail() {
    echo "FAIL: $name over $transport: $*"
    for f in "$tmp"/*; do [ -f "$f" ] && { echo "---- $f"; grep -v "apigen wire\|apigen trace" "$f" | sed 's/^/  /' | head -60; }; done
    exit 1
}
LD_PRELOAD=$pre LD_LIBRARY_PATH=$nlib timeout 120 "$prog" > "$tmp/native.out" 2> "$tmp/native.err"
nrc=$?
[ "$nrc" = 0 ] && ! grep -qw NO "$tmp/native.out" || fail "natively over the fakes: exit $nrc or a wrong answer"
case "$transport" in
unix) url="unix://$tmp/s.sock" ;;
tcp) url="tcp://127.0.0.1:0" ;;
shm) url="shm://apigen-memo-$$" ;;
*) echo "unknown transport $transport"; exit 2 ;;
esac
LD_PRELOAD=$pre LD_LIBRARY_PATH=$nlib "$server" --listen "$url" > "$tmp/server.log" 2>&1 &
spid=$!
i=0
while [ $i -lt 200 ] && ! grep -q listening "$tmp/server.log" 2>/dev/null; do sleep 0.05; i=$((i + 1)); done
grep -q listening "$tmp/server.log" || fail "the server did not start"
[ "$transport" = tcp ] && url=$(sed -n 's/.*listening on \([a-z]*:[^ ]*\) .*/\1/p' "$tmp/server.log" | head -1)
for mode in memo nocache; do
    c=1
    [ "$mode" = nocache ] && c=0
    APIGEN_CACHE=$c APIGEN_SERVER=$url APIGEN_TIMEOUT_MS=60000 APIGEN_TRACE=$tmp/$mode.trace \
        LD_LIBRARY_PATH=$stubdir timeout 120 "$prog" > "$tmp/$mode.out" 2> "$tmp/$mode.err"
    frc=$?
    [ "$frc" = 0 ] || fail "forwarded ($mode): exit $frc"
    cmp -s "$tmp/native.out" "$tmp/$mode.out" || { diff -u "$tmp/native.out" "$tmp/$mode.out"; fail "answers differ ($mode)"; }
done
grep -q "^refused by: the next call$" "$tmp/memo.err" || fail "the refused setter was not queued"
# the fake answers each question with what it was asked about: a kept
# answer of other values would be the same answer
grep -q "T and the workspace limit: each another answer$" "$tmp/native.out" &&
    grep -q "other rows: another answer;" "$tmp/native.out" &&
    grep -q "the same both times: yes; the loop's answer: yes$" "$tmp/native.out" ||
    fail "the fake does not answer other values with other answers"
questions=$(sed -n 's/^questions: //p' "$tmp/memo.err")
calls=$(sed -n 's/^calls: //p' "$tmp/memo.err")
[ -n "$questions" ] && [ -n "$calls" ] || fail "no question count"
rt=$(grep -c "apigen wire \[[0-9]*\]: rt $fn " "$tmp/memo.trace")
kept=$(grep -c "$fn(.*\[cached, " "$tmp/memo.trace")
rt0=$(grep -c "apigen wire \[[0-9]*\]: rt $fn " "$tmp/nocache.trace")
# while calls are queued, one kept answer in 16 is asked again (a queued
# call's error must reach the program): at most calls/16 more
extra=$(( (calls + 15) / 16 ))
[ "$rt" -ge "$questions" ] && [ "$rt" -le $((questions + extra)) ] ||
    fail "$rt round trips of $fn for $questions distinct questions ($calls calls; at most $extra asked again)"
[ "$kept" = $((calls - rt)) ] || fail "$kept calls answered in the guest (want $((calls - rt)))"
calls0=$(sed -n 's/^calls: //p' "$tmp/nocache.err") # section 5 stops at its error: sooner here
[ "$rt0" = "$calls0" ] || fail "APIGEN_CACHE=0: $rt0 round trips of $fn for $calls0 calls"
echo "PASS: $name over $transport: the same answers natively, forwarded and with APIGEN_CACHE=0; $fn: $calls calls, $rt round trips (APIGEN_CACHE=0: $calls0 calls, $rt0 round trips)"
sed 's/^/  | /' "$tmp/native.out"
