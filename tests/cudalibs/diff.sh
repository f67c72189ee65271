#!/bin/sh
# One differential run of a cuSPARSE or cuSOLVER example: natively and through
# the stubs (STUB_DIR: the runtime's, cuSPARSE's and cuSOLVER's) to a fresh
# family SERVER (apigen-server-cuda-family) over TRANSPORT (unix|tcp|shm).
# The native run and the server load NODRIVER_DIR first (the toolkit's stubs
# library as libcuda.so.1: no GPU here) and, when FAKE is not "none", preload
# FAKE (tests/cudalibs/fake_*.c: a CPU stand-in for the device and the
# library's calls). stdout and the exit status must match, and the run must
# take the path EXPECT says:
#   nodevice  exit 2 and "no usable GPU" (the real libraries without a GPU);
#             on a machine with a GPU driver the run is only compared
#   ok        exit 0 and no word NO (every result matched the CPU)
#   bad=FILE  the forwarded run alone prints exactly FILE and exits 0 (bad
#             input: natively a forged handle crashes the real library), and
#             the server still runs
#   diff.sh SERVER STUB_DIR NODRIVER_DIR FAKE TRANSPORT EXPECT PROGRAM
set -u
server=$1 stubdir=$2 nodriver=$3 fake=$4 transport=$5 expect=$6 prog=$7
[ "$fake" = none ] && fake=
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cudalibs-diff.XXXXXX")
spid=
cleanup() { [ -n "$spid" ] && kill "$spid" 2>/dev/null && wait "$spid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT INT TERM
drv=
ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1 ' || drv=$nodriver
name=$(basename "$prog")
case "$expect" in
bad=*) nrc=0; : > "$tmp/native.out"; : > "$tmp/native.err" ;;
*) LD_PRELOAD="$fake" LD_LIBRARY_PATH="$drv" timeout 120 "$prog" > "$tmp/native.out" 2> "$tmp/native.err"
   nrc=$? ;;
esac
case "$transport" in
unix) url="unix://$tmp/s.sock" ;;
tcp) url="tcp://127.0.0.1:0" ;;
shm) url="shm://apigen-cudalibs-$$" ;;
*) echo "unknown transport $transport"; exit 2 ;;
esac
LD_PRELOAD="$fake" LD_LIBRARY_PATH="$drv" "$server" --listen "$url" > "$tmp/server.log" 2>&1 &
spid=$!
i=0
while [ $i -lt 200 ]; do
    grep -q "listening" "$tmp/server.log" 2>/dev/null && break
    sleep 0.05; i=$((i + 1))
done
[ "$transport" = tcp ] && url=$(sed -n 's/.*listening on \([a-z]*:[^ ]*\) .*/\1/p' "$tmp/server.log" | head -1)
APIGEN_SERVER=$url APIGEN_TIMEOUT_MS=60000 LD_LIBRARY_PATH="$stubdir" timeout 120 "$prog" > "$tmp/fwd.out" 2> "$tmp/fwd.err"
frc=$?
fail() {
    echo "FAIL: $name over $transport: $1 (native exit $nrc, forwarded exit $frc)"
    diff -u "$tmp/native.out" "$tmp/fwd.out" | sed 's/^/  /'
    echo "  native stdout:"; sed 's/^/    /' "$tmp/native.out"
    echo "  native stderr:"; sed 's/^/    /' "$tmp/native.err"
    echo "  forwarded stderr:"; sed 's/^/    /' "$tmp/fwd.err"
    echo "  server log:"; sed 's/^/    /' "$tmp/server.log"
    exit 1
}
case "$expect" in
bad=*)
    want=${expect#bad=}
    [ "$frc" = 0 ] && cmp -s "$want" "$tmp/fwd.out" || { cp "$want" "$tmp/native.out"; fail "not the expected answers"; }
    kill -0 "$spid" 2>/dev/null || fail "the server is gone"
    echo "PASS: $name over $transport: every bad input failed cleanly, the server runs on"
    sed 's/^/  | /' "$tmp/fwd.out"
    exit 0 ;;
esac
[ "$nrc" = "$frc" ] && cmp -s "$tmp/native.out" "$tmp/fwd.out" || fail "outputs differ"
case "$expect" in
nodevice)
    if [ -z "$drv" ]; then
        echo "note: a CUDA driver is installed here: the no-GPU path is not asserted"
    elif [ "$nrc" != 2 ] || ! grep -q "no usable GPU" "$tmp/native.out"; then
        fail "expected the no-GPU path (exit 2)"
    fi ;;
ok)
    { [ "$nrc" = 0 ] && ! grep -qw NO "$tmp/native.out"; } || fail "expected every result to match" ;;
*) echo "unknown EXPECT $expect"; exit 2 ;;
esac
echo "PASS: $name over $transport: identical stdout ($(wc -l < "$tmp/native.out") lines), exit $nrc, path $expect"
sed 's/^/  | /' "$tmp/native.out"
exit 0
