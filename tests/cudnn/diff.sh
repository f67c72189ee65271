#!/bin/sh
# One differential run of a cuDNN example: natively (the libcudnn.so.9 of
# NATIVE_DIR: NVIDIA's, or the fakes of tests/cudnn with their
# libcudart.so.13) and through the stubs (STUB_DIR: libcudnn.so.9 and
# libcudart.so.13, one session) to a fresh SERVER over TRANSPORT
# (unix|tcp|shm). stdout and the exit status must match, and the run must
# take the path EXPECT says:
#   nodevice  exit 2 and "no usable GPU" (NVIDIA's library on a machine
#             without a GPU: cudnnCreate fails the same way both sides);
#             on a machine with a GPU driver the run is only compared
#   ok        exit 0 and no line saying "NO" (every result matched the CPU)
#   diff.sh SERVER STUB_DIR NATIVE_DIR TRANSPORT EXPECT PROGRAM [ARGS...]
set -u
server=$1 stubdir=$2 native=$3 transport=$4 expect=$5
shift 5
prog=$1
# with a CUDA driver here the examples run on the GPU, which needs the
# family's server (the runtime's calls too): tests/gpu/cudnn.sh covers that
if [ "$expect" = nodevice ] && ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1 '; then
    echo "SKIP: a CUDA driver is installed here: the GPU path is tests/gpu/cudnn.sh"
    exit 77
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cudnn-diff.XXXXXX")
spid=
cleanup() { [ -n "$spid" ] && kill "$spid" 2>/dev/null && wait "$spid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT INT TERM
LD_LIBRARY_PATH="$native" timeout 120 "$@" > "$tmp/native.out" 2> "$tmp/native.err"
nrc=$?
case "$transport" in
unix) url="unix://$tmp/s.sock" ;;
tcp) url="tcp://127.0.0.1:0" ;;
shm) url="shm://apigen-cudnn-$$" ;;
*) echo "unknown transport $transport"; exit 2 ;;
esac
"$server" --listen "$url" > "$tmp/server.log" 2>&1 &
spid=$!
i=0
while [ $i -lt 100 ]; do
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
[ "$nrc" = "$frc" ] && cmp -s "$tmp/native.out" "$tmp/fwd.out" || fail "outputs differ"
case "$expect" in
nodevice)
    if [ "$nrc" != 2 ] || ! grep -q "no usable GPU" "$tmp/native.out"; then
        fail "expected the no-GPU path (exit 2, cudnnCreate failing)"
    fi ;;
ok)
    { [ "$nrc" = 0 ] && ! grep -qw NO "$tmp/native.out"; } || fail "expected every result to match" ;;
*) echo "unknown EXPECT $expect"; exit 2 ;;
esac
echo "PASS: $name over $transport: identical stdout ($(wc -l < "$tmp/native.out") lines), exit $nrc, path $expect"
sed 's/^/  | /' "$tmp/native.out"
exit 0
