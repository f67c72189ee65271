#!/bin/sh
# One differential run of a cuBLASLt example: natively (the libraries of
# NATIVE_PATH: the toolkit's, or the fake of tests/cublasLt before them) and
# through the runtime's and cuBLASLt's stubs (STUB_DIR) to a fresh SERVER of
# the CUDA family over TRANSPORT (unix|tcp|shm). PRELOAD (or "none") is
# preloaded natively and into the server: the fake device. stdout and the
# exit status must match, the program's calls of both APIs must reach ONE
# session of the server, and the run must take the path EXPECT says:
#   nodevice  exit 2 and "no usable GPU" (the toolkit's libraries on a
#             machine without a GPU: the first cudaMalloc fails both sides);
#             on a machine with a GPU driver the run is only compared
#   ok        exit 0 and no line saying "NO" (every result matched the CPU)
#   diff.sh SERVER STUB_DIR NATIVE_PATH PRELOAD TRANSPORT EXPECT PROGRAM [ARGS...]
set -u
server=$1 stubdir=$2 native=$3 preload=$4 transport=$5 expect=$6
shift 6
prog=$1
[ "$preload" = none ] && preload=
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cublasLt-diff.XXXXXX")
spid=
cleanup() { [ -n "$spid" ] && kill "$spid" 2>/dev/null && wait "$spid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT INT TERM
LD_PRELOAD="$preload" LD_LIBRARY_PATH="$native" timeout 120 "$@" > "$tmp/native.out" 2> "$tmp/native.err"
nrc=$?
case "$transport" in
unix) url="unix://$tmp/s.sock" ;;
tcp) url="tcp://127.0.0.1:0" ;;
shm) url="shm://apigen-cublasLt-$$" ;;
*) echo "unknown transport $transport"; exit 2 ;;
esac
LD_PRELOAD="$preload" LD_LIBRARY_PATH="$native" APIGEN_TRACE=1 "$server" --listen "$url" > "$tmp/server.log" 2>&1 &
spid=$!
i=0
while [ $i -lt 100 ]; do
    grep -q "listening" "$tmp/server.log" 2>/dev/null && break
    sleep 0.05; i=$((i + 1))
done
[ "$transport" = tcp ] && url=$(sed -n 's/.*listening on \([a-z]*:[^ ]*\) .*/\1/p' "$tmp/server.log" | head -1)
APIGEN_SERVER=$url APIGEN_TIMEOUT_MS=60000 LD_LIBRARY_PATH="$stubdir" timeout 120 "$@" > "$tmp/fwd.out" 2> "$tmp/fwd.err"
frc=$?
# the session's process may log its last calls after the reply: a moment
i=0
while [ $i -lt 40 ] && ! grep -q "server: cudart\.cuda[A-Za-z_0-9]* " "$tmp/server.log"; do
    sleep 0.05; i=$((i + 1))
done
sleep 0.2
kill "$spid"; wait "$spid" 2>/dev/null; spid=
name=$(basename "$prog")
fail() {
    echo "FAIL: $name over $transport: $1 (native exit $nrc, forwarded exit $frc)"
    diff -u "$tmp/native.out" "$tmp/fwd.out" | sed 's/^/  /'
    echo "  native stdout:"; sed 's/^/    /' "$tmp/native.out"
    echo "  native stderr:"; sed 's/^/    /' "$tmp/native.err"
    echo "  forwarded stderr:"; sed 's/^/    /' "$tmp/fwd.err"
    echo "  server log:"; sed 's/^/    /' "$tmp/server.log" | tail -60
    exit 1
}
[ "$nrc" = "$frc" ] && cmp -s "$tmp/native.out" "$tmp/fwd.out" || fail "outputs differ"
n=$(grep -c "server: [a-zA-Z]* new session" "$tmp/server.log")
[ "$n" = 1 ] || fail "$n sessions for one process (want one for the runtime and cuBLASLt)"
grep -q "server: cudart\.cuda[A-Za-z_0-9]* " "$tmp/server.log" || fail "no runtime call reached the server"
case "$expect" in
nodevice)
    if ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1 '; then
        echo "note: a CUDA driver is installed here: the no-GPU path is not asserted"
    elif [ "$nrc" != 2 ] || ! grep -q "no usable GPU" "$tmp/native.out"; then
        fail "expected the no-GPU path (exit 2, cudaMalloc failing)"
    fi ;;
ok)
    { [ "$nrc" = 0 ] && ! grep -qw NO "$tmp/native.out"; } || fail "expected every result to match"
    grep -q "server: cublasLt joined the session of cudart\|server: cudart joined the session of cublasLt" "$tmp/server.log" ||
        fail "cuBLASLt did not join the runtime's session"
    grep -q "server: cublasLt\.cublasLtMatmulAlgoGetHeuristic " "$tmp/server.log" ||
        fail "no cuBLASLt call reached the server" ;;
*) echo "unknown EXPECT $expect"; exit 2 ;;
esac
echo "PASS: $name over $transport: identical stdout ($(wc -l < "$tmp/native.out") lines), exit $nrc, path $expect, one session"
sed 's/^/  | /' "$tmp/native.out"
exit 0
