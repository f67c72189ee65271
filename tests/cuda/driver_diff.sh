#!/bin/sh
# One differential run of a program over the CUDA driver: natively (the
# machine's libcuda.so.1; on a machine without a driver, NODRIVER_DIR's
# libcuda.so.1, the toolkit's stubs library, for the program and the server
# alike) and through build/stub/libcuda.so.1 to a fresh apigen-server-cuda
# over TRANSPORT (unix|tcp|shm). stdout and the exit status must match.
#   driver_diff.sh SERVER STUB_DIR NODRIVER_DIR TRANSPORT PROGRAM [ARGS...]
# DIFF_LAUNCH: a launcher that puts the stubs in place itself
# (scripts/cuda-run), which then runs the forwarded program.
set -u
server=$1 stubdir=$2 nodriver=$3 transport=$4
shift 4
prog=$1
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cuda-diff.XXXXXX")
spid=
cleanup() { [ -n "$spid" ] && kill "$spid" 2>/dev/null && wait "$spid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT INT TERM
drv=
ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1 ' || drv=$nodriver
LD_LIBRARY_PATH="$drv" timeout 120 "$@" > "$tmp/native.out" 2> "$tmp/native.err"
nrc=$?
case "$transport" in
unix) url="unix://$tmp/s.sock" ;;
tcp) url="tcp://127.0.0.1:0" ;;
shm) url="shm://apigen-cuda-$$" ;;
*) echo "unknown transport $transport"; exit 2 ;;
esac
# every transport with the spec's isolation (a process per session): shm://
# connections are handed to the session process with their segment
LD_LIBRARY_PATH="$drv" "$server" --listen "$url" > "$tmp/server.log" 2>&1 &
spid=$!
i=0
while [ $i -lt 100 ]; do
    grep -q "listening" "$tmp/server.log" 2>/dev/null && break
    sleep 0.05; i=$((i + 1))
done
[ "$transport" = tcp ] && url=$(sed -n 's/.*listening on \([a-z]*:[^ ]*\) .*/\1/p' "$tmp/server.log" | head -1)
if [ -n "${DIFF_LAUNCH:-}" ]; then # a launcher puts the stubs in place itself (scripts/cuda-run)
    # shellcheck disable=SC2086 # DIFF_LAUNCH: a command and its options
    APIGEN_SERVER=$url APIGEN_TIMEOUT_MS=60000 timeout 120 $DIFF_LAUNCH "$@" > "$tmp/fwd.out" 2> "$tmp/fwd.err"
else
    APIGEN_SERVER=$url APIGEN_TIMEOUT_MS=60000 LD_LIBRARY_PATH="$stubdir" timeout 120 "$@" > "$tmp/fwd.out" 2> "$tmp/fwd.err"
fi
frc=$?
name=$(basename "$prog")
if [ "$nrc" != "$frc" ] || ! cmp -s "$tmp/native.out" "$tmp/fwd.out"; then
    echo "FAIL: $name over $transport: native exit $nrc, forwarded exit $frc"
    diff -u "$tmp/native.out" "$tmp/fwd.out" | sed 's/^/  /'
    echo "  native stderr:"; sed 's/^/    /' "$tmp/native.err"
    echo "  forwarded stderr:"; sed 's/^/    /' "$tmp/fwd.err"
    echo "  server log:"; sed 's/^/    /' "$tmp/server.log"
    exit 1
fi
echo "PASS: $name over $transport: identical stdout ($(wc -l < "$tmp/native.out") lines), exit $nrc${drv:+ (no driver here: the toolkit's stubs library on both sides)}"
sed 's/^/  | /' "$tmp/native.out"
echo "  forwarded stderr:"; sed 's/^/    /' "$tmp/fwd.err"
exit 0
