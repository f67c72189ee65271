#!/bin/sh
# tests/cuda/honest_ci.sh SERVER STUB_DIR FAKE_DEVICE PROGRAM EXPECTED TRANSPORT
# Runs tests/cuda/honest_ci (PROGRAM) through the cudart stub against
# apigen-server-cudart with tests/cuda/fake_device.c preloaded (no GPU in
# CI) over TRANSPORT (unix|tcp|shm) and compares its output with EXPECTED.
# Over tcp there is no shared-memory arena: pinned memory is the guest's
# own and has no device pointer until a kernel reaches it or it is asked
# for (a pointer query makes none: "device pointer none").
set -u
server=$1 stubdir=$2 fake=$3 prog=$4 expected=$5 transport=$6
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cudart-honest.XXXXXX")
spid=
cleanup() { [ -n "$spid" ] && kill "$spid" 2>/dev/null && wait "$spid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT INT TERM
case "$transport" in
unix) url="unix://$tmp/s.sock" ;;
tcp) url="tcp://127.0.0.1:0" ;;
shm) url="shm://apigen-honest-$$" ;;
*) echo "unknown transport $transport"; exit 2 ;;
esac
iso=
[ "$transport" = shm ] && iso="--isolation thread"
# shellcheck disable=SC2086
LD_PRELOAD=$fake "$server" --listen "$url" $iso > "$tmp/server.log" 2>&1 &
spid=$!
i=0
while [ $i -lt 100 ]; do
    grep -q "listening" "$tmp/server.log" 2>/dev/null && break
    sleep 0.05; i=$((i + 1))
done
[ "$transport" = tcp ] && url=$(sed -n 's/.*listening on \([a-z]*:[^ ]*\) .*/\1/p' "$tmp/server.log" | head -1)
APIGEN_SERVER=$url APIGEN_TIMEOUT_MS=60000 LD_LIBRARY_PATH="$stubdir" timeout 120 "$prog" > "$tmp/out" 2> "$tmp/err"
rc=$?
if [ "$transport" = shm ]; then
    # sessions as threads (--isolation thread): the server's stdout is every
    # session's, so what the device prints stays there (server.log)
    grep -v '^device: a kernel printed this' "$expected" > "$tmp/want"
elif [ "$transport" = tcp ]; then
    sed -e 's/^\(cudaPointerGetAttributes(pinned): .*\), device pointer yes$/\1, device pointer none/' \
        "$expected" > "$tmp/want"
else
    cp "$expected" "$tmp/want"
fi
# a kernel's assert message: on the program's stderr (a session process
# forwards it), in the server's log with sessions as threads (shm here)
assert_line='fake.cu:7: void k(): block: [0,0,0], thread: [0,0,0] Assertion `n < 8` failed.'
where="$tmp/err"
[ "$transport" = shm ] && where="$tmp/server.log"
if ! grep -qF "$assert_line" "$where"; then
    echo "FAIL: honest_ci over $transport: the assert message is not in $(basename "$where")"
    rc=1
fi
if [ "$transport" != shm ] && grep -qF "$assert_line" "$tmp/server.log"; then
    echo "FAIL: honest_ci over $transport: the assert message stayed in the server's log"
    rc=1
fi
if [ $rc != 0 ] || ! cmp -s "$tmp/want" "$tmp/out"; then
    echo "FAIL: honest_ci over $transport: exit $rc"
    diff -u "$tmp/want" "$tmp/out" | sed 's/^/  /'
    echo "  stderr:"; sed 's/^/    /' "$tmp/err"
    echo "  server log:"; sed 's/^/    /' "$tmp/server.log"
    exit 1
fi
echo "PASS: honest_ci over $transport ($(wc -l < "$tmp/out") lines as expected)"
exit 0
