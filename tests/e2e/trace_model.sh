#!/usr/bin/env bash
# apigen-trace-model reads a trace right: on a fixed trace (trace_model.fixture:
# 4 round trips, 1049200 bytes up, 1048860 down, 7 calls of which 1 cached, a
# server line and a log line skipped) it prints those counts and the
# prediction the model gives (span 5.85 ms; on 10 us / 8 Gb/s: wire
# 0.04 + 2.098 ms, compute 3.712 ms; at 50 us / 25 Gb/s: 3.712 + 0.2 +
# 0.671 = 4.583 ms). Then live: exa_bulk over
# unix:// with APIGEN_TRACE has round trips and at least its 8 MiB each way.
# No timing is asserted.
#
#   trace_model.sh BUILD_DIR SOURCE_DIR
set -u
b=$1 src=$2
tool=$b/bench/apigen-trace-model
tmp=$(mktemp -d)
trap 'kill $spid 2>/dev/null; rm -rf "$tmp"' EXIT
spid=
fail() { echo "FAIL: $*"; cat "$tmp/out" 2>/dev/null; exit 1; }
"$tool" "$src/tests/e2e/trace_model.fixture" --on 10,8 --at 50,25 > "$tmp/out" || fail "exit $?"
for want in "calls: 7 \(answered in the guest: 1\)" "round trips: 4" "bytes up: 1049200" "bytes down: 1048860" \
            "span: 5.850 ms" "compute 3.712 ms \+ wire 2.138 ms" "exaMemcpy +2 +1048780 +1048748" \
            "50.00 us, 25.00 Gb/s +0.871 +4.583 +0.78"; do
    grep -Eq "$want" "$tmp/out" || fail "no line matching: $want"
done
"$tool" > /dev/null 2>&1 && fail "no trace named: exit 0"
"$tool" "$src/tests/e2e/trace_model.fixture" --at 50 > /dev/null 2>&1 && fail "--at 50 (no bandwidth) taken"

"$b/examples/exa/apigen-server-exa" --listen "unix://$tmp/s.sock" > "$tmp/server.log" 2>&1 &
spid=$!
for _ in $(seq 100); do grep -q listening "$tmp/server.log" && break; sleep 0.05; done
LD_LIBRARY_PATH=$b/stub APIGEN_SERVER="unix://$tmp/s.sock" APIGEN_TRACE="$tmp/bulk.trace" \
    timeout 60 "$b/examples/exa/exa_bulk" 8 > /dev/null 2>&1 || fail "exa_bulk forwarded exited $?"
"$tool" "$tmp/bulk.trace" > "$tmp/out" || fail "exit $? on the live trace"
trips=$(sed -n 's/^round trips: //p' "$tmp/out")
up=$(sed -n 's/^bytes up: //p' "$tmp/out")
down=$(sed -n 's/^bytes down: //p' "$tmp/out")
wires=$(grep -c "^apigen wire" "$tmp/bulk.trace")
[ "${trips:-0}" -gt 0 ] && [ "$trips" = "$wires" ] || fail "round trips $trips, wire lines $wires"
[ "${up:-0}" -ge $((8 << 20)) ] && [ "${down:-0}" -ge $((8 << 20)) ] || fail "8 MiB each way, counted $up up, $down down"
echo "PASS: fixture counted right; exa_bulk 8 MiB: $trips round trips, $up bytes up, $down down"
