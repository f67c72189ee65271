#!/bin/sh
# One differential run of an NVRTC example: natively (the toolkit's
# libnvrtc.so.13 / libnvJitLink.so.13 in REAL_DIR; libcuda.so.1 of the
# machine, else the toolkit's stubs library in NODRIVER_DIR) and through the
# stubs (STUB_DIR) to a fresh SERVER (the CUDA family's) over TRANSPORT.
# stdout and the exit status must match byte for byte (the PTX, CUBIN and
# LTO-IR hashes included), and the run must take the path EXPECT says:
#   nodevice  exit 2 and "no usable GPU" (no GPU: the launch is skipped);
#             on a machine with a CUDA driver: exit 0 and "all OK"
#   ok        exit 0
# The guest's temporary headers live under a folder of the guest
# ($tmp/guest, its TMPDIR); the server runs in $tmp/server. The server must
# not have been refused a file (it never tried to open a guest header: they
# came in memory).
#   diff.sh SERVER STUB_DIR REAL_DIR NODRIVER_DIR TRANSPORT EXPECT PROGRAM
set -u
server=$1 stubdir=$2 realdir=$3 nodriver=$4 transport=$5 expect=$6 prog=$7
here=$(dirname "$0")
. "$here/start_server.sh"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/nvrtc-diff.XXXXXX")
spid=
trap 'stop_server; rm -rf "$tmp"' EXIT INT TERM
mkdir -p "$tmp/guest" "$tmp/server"
NODRIVER=
driver=yes
if ! ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1 '; then NODRIVER=$nodriver; driver=no; fi
TMPDIR="$tmp/guest" LD_LIBRARY_PATH="$realdir${NODRIVER:+:$NODRIVER}" timeout 120 "$prog" > "$tmp/native.out" 2> "$tmp/native.err"
nrc=$?
start_server "$server" "$transport" "$tmp/server"
TMPDIR="$tmp/guest" APIGEN_SERVER=$url APIGEN_TIMEOUT_MS=60000 LD_LIBRARY_PATH="$stubdir" timeout 120 "$prog" > "$tmp/fwd.out" 2> "$tmp/fwd.err"
frc=$?
name=$(basename "$prog")
fail() {
    echo "FAIL: $name over $transport: $1 (native exit $nrc, forwarded exit $frc)"
    diff -u "$tmp/native.out" "$tmp/fwd.out" | sed 's/^/  /'
    echo "  native stdout:"; sed 's/^/    /' "$tmp/native.out"
    echo "  native stderr:"; sed 's/^/    /' "$tmp/native.err"
    echo "  forwarded stderr:"; sed 's/^/    /' "$tmp/fwd.err"
    echo "  server log:"; sed 's/^/    /' "$tmp/server/server.log"
    exit 1
}
LD_LIBRARY_PATH="$stubdir" ldd "$prog" | grep -q "$stubdir/libnvrtc.so.13" || fail "the program would not load the NVRTC stub"
[ "$nrc" = "$frc" ] && cmp -s "$tmp/native.out" "$tmp/fwd.out" || fail "outputs differ"
grep -q "refused to the compile" "$tmp/server/server.log" && fail "the server's compile tried to open a file"
[ -z "$(ls -A "$tmp/guest")" ] || fail "the program left files in its temporary folder"
case "$expect" in
nodevice)
    if [ $driver = yes ]; then
        { [ "$nrc" = 0 ] && grep -q "all OK" "$tmp/native.out"; } || fail "expected the launch to check out"
    elif [ "$nrc" != 2 ] || ! grep -q "no usable GPU" "$tmp/native.out"; then
        fail "expected the no-GPU path (exit 2, cuInit failing)"
    fi ;;
ok) [ "$nrc" = 0 ] || fail "expected exit 0" ;;
*) echo "unknown EXPECT $expect"; exit 2 ;;
esac
echo "PASS: $name over $transport: identical stdout ($(wc -l < "$tmp/native.out") lines), exit $nrc"
sed 's/^/  | /' "$tmp/native.out"
exit 0
