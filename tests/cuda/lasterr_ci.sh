#!/bin/sh
# tests/cuda/lasterr_ci.sh SERVER STUB_DIR FAKE PROGRAM TRANSPORT
# tests/cuda/lasterr_ci.c natively (FAKE, tests/cuda/fake_launch_limits.c with
# fake_device.c and fake_device_limits.c, preloaded over the real
# libcudart) and through the cudart
# stub against SERVER with FAKE preloaded (no GPU in CI), over TRANSPORT
# (unix|tcp). Checks:
#   - the output is the same both ways (each launch's error at the launch,
#     the last error after it once, then success);
#   - forwarded, the launch + cudaGetLastError loops after the warm-up make
#     no round trip (APIGEN_TRACE's "apigen wire [pid]: rt" lines between the
#     program's MARK lines), the round trips after errors included; nor do
#     300 cudaStreamIsCapturing before any capture began, nor 30 after it
#     ended, while each of 30 while it is open asks the server;
#   - the controls: APIGEN_LAST_ERROR=0 (every cudaGetLastError asks the
#     server, as before: exactly one round trip each) and APIGEN_CACHE=0 (no
#     answer kept in the guest: at least that): the same output.
set -u
server=$1 stubdir=$2 fake=$3 prog=$4 transport=$5
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cudart-lasterr.XXXXXX")
spid=
cleanup() { [ -n "$spid" ] && kill "$spid" 2>/dev/null && wait "$spid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT INT TERM
export FAKE_DEVICE_COUNT=2
fail() { echo "FAIL: lasterr_ci over $transport: $*"; exit 1; }

LD_PRELOAD=$fake timeout 60 "$prog" > "$tmp/native" 2> "$tmp/native.err" ||
    { cat "$tmp/native" "$tmp/native.err"; fail "natively: exit $?"; }

case "$transport" in
unix) url="unix://$tmp/s.sock" ;;
tcp) url="tcp://127.0.0.1:0" ;;
*) echo "unknown transport $transport"; exit 2 ;;
esac
LD_PRELOAD=$fake "$server" --listen "$url" > "$tmp/server.log" 2>&1 &
spid=$!
i=0
while [ $i -lt 100 ]; do
    grep -q "listening" "$tmp/server.log" 2>/dev/null && break
    sleep 0.05; i=$((i + 1))
done
[ "$transport" = tcp ] && url=$(sed -n 's/.*listening on \([a-z]*:[^ ]*\) .*/\1/p' "$tmp/server.log" | head -1)

# round trips between "MARK NAME begin" and "MARK NAME end" in file $2
rts() {
    awk -v b="MARK $1 begin" -v e="MARK $1 end" '
        $0 == b { on = 1; next } $0 == e { on = 0 }
        on && /^apigen wire \[[0-9]+\]: rt / { n++ } END { print n + 0 }' "$2"
}

for mode in kept remote nocache; do
    cache=1 le=1
    [ $mode = remote ] && le=0
    [ $mode = nocache ] && cache=0
    APIGEN_SERVER=$url APIGEN_TIMEOUT_MS=60000 APIGEN_TRACE=1 APIGEN_CACHE=$cache \
        APIGEN_LAST_ERROR=$le LD_LIBRARY_PATH="$stubdir" timeout 60 "$prog" > "$tmp/$mode" 2> "$tmp/$mode.err"
    rc=$?
    if [ $rc != 0 ] || ! cmp -s "$tmp/native" "$tmp/$mode"; then
        echo "FAIL: lasterr_ci over $transport ($mode): exit $rc, output differs from native"
        diff -u "$tmp/native" "$tmp/$mode" | sed 's/^/  /'
        echo "  stderr (no trace):"; grep -v '^apigen ' "$tmp/$mode.err" | sed 's/^/    /'
        echo "  server log:"; sed 's/^/    /' "$tmp/server.log"
        exit 1
    fi
    loop=$(rts loop "$tmp/$mode.err") after=$(rts "after the errors" "$tmp/$mode.err")
    mset=$(rts "memset loop" "$tmp/$mode.err") copy=$(rts "copy loop" "$tmp/$mode.err")
    capq=$(rts "capture queries" "$tmp/$mode.err") capa=$(rts "capture queries after a capture" "$tmp/$mode.err")
    capo=$(rts "capture queries while one is open" "$tmp/$mode.err")
    echo "$mode (APIGEN_CACHE=$cache APIGEN_LAST_ERROR=$le): round trips: loop of 100 launches + cudaGetLastError: $loop; after the errors: $after; 100 cudaMemsetAsync: $mset; 100 cudaMemcpyAsync within the device: $copy; 300 capture queries: $capq; 30 while a capture is open: $capo; 30 after it: $capa"
    # while a capture is open, every capture query asks the server
    [ "$capo" = 30 ] || fail "$mode: $capo round trips for 30 capture queries while a capture is open, want 30"
    if [ $mode = remote ]; then
        # every cudaGetLastError asks the server, nothing else does (main before this change)
        [ "$loop" = 100 ] && [ "$after" = 100 ] && [ "$mset" = 100 ] && [ "$copy" = 100 ] &&
            [ "$capq" = 300 ] && [ "$capa" = 30 ] ||
            fail "APIGEN_LAST_ERROR=0: not one round trip per cudaGetLastError and capture query"
    elif [ $mode = kept ]; then
        if [ "$loop" != 0 ] || [ "$after" != 0 ] || [ "$mset" != 0 ] || [ "$copy" != 0 ] ||
            [ "$capq" != 0 ] || [ "$capa" != 0 ]; then
            awk '/^MARK .* begin/ { on = 1 } on && /: rt / { print "    " $0 } /^MARK .* end/ { on = 0 }' \
                "$tmp/$mode.err" | head -20
            fail "call + cudaGetLastError loops or capture queries made round trips"
        fi
    else
        [ "$loop" -ge 100 ] && [ "$after" -ge 100 ] && [ "$mset" -ge 100 ] && [ "$copy" -ge 100 ] &&
            [ "$capq" -ge 300 ] && [ "$capa" -ge 30 ] ||
            fail "the control made fewer round trips than calls"
    fi
done
echo "PASS: lasterr_ci over $transport ($(wc -l < "$tmp/native") lines as natively)"
exit 0
