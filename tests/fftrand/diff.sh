#!/bin/sh
# One differential run of a cuFFT or cuRAND example: natively and through the
# stubs (STUB_DIR: the runtime's, cuFFT's and cuRAND's) to a fresh
# apigen-server-cuda-family (SERVER) over TRANSPORT (unix|tcp|shm). stdout and
# the exit status must match, and the run must take the path EXPECT says:
#   nodevice  exit 2 and "no usable GPU" (NVIDIA's libraries on a machine
#             without a GPU; the host generators of cuRAND run before);
#             on a machine with a GPU driver the run is only compared
#   ok        exit 0 and no line saying NO (every checked result matched)
# LIBDIR is the library path of the native run and of the server (the
# toolkit's stubs libcuda.so.1 where no driver is installed); PRELOAD
# (':'-separated, or -) is preloaded into both: the fake device and the fake
# libraries of tests/fftrand, under the real sonames, so that both sides
# compute on the CPU.
#   diff.sh SERVER STUB_DIR LIBDIR PRELOAD TRANSPORT EXPECT PROGRAM [ARGS...]
set -u
server=$1 stubdir=$2 libdir=$3 preload=$4 transport=$5 expect=$6
shift 6
prog=$1
[ "$preload" = - ] && preload=
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fftrand-diff.XXXXXX")
spid=
cleanup() { [ -n "$spid" ] && kill "$spid" 2>/dev/null && wait "$spid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT INT TERM
LD_PRELOAD="$preload" LD_LIBRARY_PATH="$libdir" timeout 120 "$@" > "$tmp/native.out" 2> "$tmp/native.err"
nrc=$?
case "$transport" in
unix) url="unix://$tmp/s.sock" ;;
tcp) url="tcp://127.0.0.1:0" ;;
shm) url="shm://apigen-fftrand-$$" ;;
*) echo "unknown transport $transport"; exit 2 ;;
esac
LD_PRELOAD="$preload" LD_LIBRARY_PATH="$libdir" "$server" --listen "$url" > "$tmp/server.log" 2>&1 &
spid=$!
i=0
while [ $i -lt 200 ]; do
    grep -q "listening" "$tmp/server.log" 2>/dev/null && break
    sleep 0.05; i=$((i + 1))
done
[ "$transport" = tcp ] && url=$(sed -n 's/.*listening on \([a-z]*:[^ ]*\) .*/\1/p' "$tmp/server.log" | head -1)
APIGEN_SERVER=$url APIGEN_TIMEOUT_MS=60000 LD_LIBRARY_PATH="$stubdir" timeout 120 "$@" > "$tmp/fwd.out" 2> "$tmp/fwd.err"
frc=$?
name=$(basename "$prog")
fail() {
    echo "FAIL: $name over $transport: $1 (native exit $nrc, forwarded exit $frc)"
    diff -u "$tmp/native.out" "$tmp/fwd.out" | sed 's/^/  /'
    echo "  native stdout:"; sed 's/^/    /' "$tmp/native.out"
    echo "  native stderr:"; sed 's/^/    /' "$tmp/native.err"
    echo "  forwarded stderr:"; sed 's/^/    /' "$tmp/fwd.err"
    echo "  server log:"; sed 's/^/    /' "$tmp/server.log"
    exit 1
}
LD_LIBRARY_PATH="$stubdir" ldd "$prog" | grep -q "$stubdir/" || fail "the program would not load the stubs of $stubdir"
[ "$nrc" = "$frc" ] && cmp -s "$tmp/native.out" "$tmp/fwd.out" || fail "outputs differ"
case "$expect" in
nodevice)
    if ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1 '; then
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
