#!/bin/sh
# tests/cuda/trips_ci.sh SERVER STUB_DIR FAKE PROGRAM TRANSPORT FN MAX [MIN]
# PROGRAM natively (FAKE, a stand-in device, preloaded over the real
# libcudart) and through the runtime stub (STUB_DIR) against SERVER (FAKE
# preloaded) over TRANSPORT (unix|tcp|shm), traced (APIGEN_TRACE=1: the
# guest's trace lines on stderr, between the program's own "MARK NAME
# begin" / "MARK NAME end" lines). Checks: the same stdout, both exit 0, and
# at most MAX (and at least MIN, default 0) round trips of FN ("apigen wire
# [pid]: rt FN" lines) inside the marked regions.
set -u
server=$1 stubdir=$2 fake=$3 prog=$4 transport=$5 fn=$6 max=$7 min=${8:-0}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cuda-trips.XXXXXX")
spid=
cleanup() { [ -n "$spid" ] && kill "$spid" 2>/dev/null && wait "$spid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT INT TERM
name=$(basename "$prog")
fail() { echo "FAIL: $name over $transport: $*"; for f in "$tmp"/*; do echo "---- $f"; head -40 "$f" | sed 's/^/  /'; done; exit 1; }
LD_PRELOAD=$fake timeout 60 "$prog" > "$tmp/native" 2> "$tmp/native.err" || fail "natively: exit $?"
case "$transport" in
unix) url="unix://$tmp/s.sock" ;;
tcp) url="tcp://127.0.0.1:0" ;;
shm) url="shm://apigen-trips-ci-$$" ;;
*) echo "unknown transport $transport"; exit 2 ;;
esac
LD_PRELOAD=$fake "$server" --listen "$url" > "$tmp/server.log" 2>&1 &
spid=$!
i=0
while [ $i -lt 100 ] && ! grep -q "listening" "$tmp/server.log" 2>/dev/null; do sleep 0.05; i=$((i + 1)); done
[ "$transport" = tcp ] && url=$(sed -n 's/.*listening on \([a-z]*:[^ ]*\) .*/\1/p' "$tmp/server.log" | head -1)
APIGEN_SERVER=$url APIGEN_TIMEOUT_MS=60000 APIGEN_TRACE=1 LD_LIBRARY_PATH="$stubdir" timeout 60 "$prog" \
    > "$tmp/forwarded" 2> "$tmp/forwarded.err" || fail "forwarded: exit $?"
cmp -s "$tmp/native" "$tmp/forwarded" || { diff -u "$tmp/native" "$tmp/forwarded" | sed 's/^/  /'; fail "output differs from native"; }
n=$(awk -v fn="$fn" '
    / begin$/ && /^MARK / { on = 1; next } / end$/ && /^MARK / { on = 0 }
    on && $0 ~ "^apigen wire \\[[0-9]+\\]: rt " fn " " { n++ } END { print n + 0 }' "$tmp/forwarded.err")
[ "$n" -le "$max" ] || fail "$n round trips of $fn in the marked regions, want at most $max"
[ "$n" -ge "$min" ] || fail "$n round trips of $fn in the marked regions, want at least $min"
echo "PASS: $name over $transport: identical to native; $n round trips of $fn in the marked regions (at most $max)"
