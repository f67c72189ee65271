#!/bin/sh
# cuBLAS as a member of the CUDA family (api.family: cuda): a program that
# takes its device memory and stream from the runtime (cudaMalloc,
# cudaStreamCreate) and gives them to cuBLAS (examples/cublas/gemm_runtime),
# natively and through the runtime's and cuBLAS's stubs to ONE
# apigen-server-cuda-family over TRANSPORT. No GPU in CI: the runtime's
# memory, copies and streams are tests/cuda/fake_device.c's (preloaded) and
# cuBLAS is tests/cublas/fake_cublas.c (preloaded into the server; first on
# the program's library path natively), which compute on the CPU, so both
# sides take the whole path. Checks: same stdout and exit status, every
# result right (exit 0, no "NO": cuBLAS gives back the program's stream),
# and the server's trace shows ONE session that the second API joined,
# with calls of both APIs.
# With FOREIGN (tests/cublas/family_foreign): a second process holds a
# cudaMalloc allocation; a third gives that address to cuBLAS: refused
# (CUBLAS_STATUS_INVALID_VALUE), while its own cudaMalloc memory works.
#   family.sh SERVER STUB_DIR FAKE_CUBLAS_DIR REAL_DIR FAKE_DEVICE NODRIVER_DIR TRANSPORT PROGRAM [FOREIGN]
set -u
server=$1 stubdir=$2 fakedir=$3 realdir=$4 fakedev=$5 nodriver=$6 transport=$7 prog=$8 foreign=${9:-}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cublas-family.XXXXXX")
spid=
cleanup() { [ -n "$spid" ] && kill "$spid" 2>/dev/null && wait "$spid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT INT TERM
name=$(basename "$prog")
fail() {
    echo "FAIL: $name over $transport: $*"
    for f in "$tmp"/*; do [ -f "$f" ] && { echo "---- $f"; sed 's/^/  /' "$f"; }; done
    exit 1
}
for l in libcudart.so.13 libcublas.so.13; do
    LD_LIBRARY_PATH="$stubdir" ldd "$prog" | grep -q "$stubdir/$l" || fail "the program would not load the stub $l"
done
LD_PRELOAD=$fakedev LD_LIBRARY_PATH="$fakedir:$realdir" timeout 120 "$prog" > "$tmp/native.out" 2> "$tmp/native.err"
nrc=$?
case "$transport" in
unix) url="unix://$tmp/s.sock" ;;
tcp) url="tcp://127.0.0.1:0" ;;
shm) url="shm://apigen-cublas-family-$$" ;;
*) echo "unknown transport $transport"; exit 2 ;;
esac
# the server: no driver here (NODRIVER_DIR: the toolkit's stubs library as
# libcuda.so.1), the fake runtime calls and the fake cuBLAS preloaded (the
# latter's soname stands for the toolkit's libcublas.so.13 it links)
LD_PRELOAD="$fakedev:$fakedir/libcublas.so.13" LD_LIBRARY_PATH="$nodriver" APIGEN_TRACE=1 \
    "$server" --listen "$url" > "$tmp/server.log" 2>&1 &
spid=$!
i=0
while [ $i -lt 200 ]; do
    grep -q "listening" "$tmp/server.log" 2>/dev/null && break
    sleep 0.05; i=$((i + 1))
done
grep -q "listening" "$tmp/server.log" || fail "the server did not start"
[ "$transport" = tcp ] && url=$(sed -n 's/.*listening on \([a-z]*:[^ ]*\) .*/\1/p' "$tmp/server.log" | head -1)
APIGEN_SERVER=$url APIGEN_TIMEOUT_MS=60000 LD_LIBRARY_PATH="$stubdir" timeout 120 "$prog" > "$tmp/fwd.out" 2> "$tmp/fwd.err"
frc=$?
# the server's trace lines come from the session process: up to 2 s to reach the log
i=0
while [ $i -lt 40 ] && ! grep -q "joined the session of" "$tmp/server.log"; do sleep 0.05; i=$((i + 1)); done
sleep 0.2
cp "$tmp/server.log" "$tmp/server.prog.log" # the program's run alone
if [ -n "$foreign" ]; then
    mkfifo "$tmp/hold.in"
    APIGEN_SERVER=$url APIGEN_TIMEOUT_MS=60000 LD_LIBRARY_PATH="$stubdir" timeout 120 "$foreign" hold \
        < "$tmp/hold.in" > "$tmp/hold.out" 2> "$tmp/hold.err" &
    hpid=$!
    exec 3> "$tmp/hold.in"
    i=0
    while [ $i -lt 400 ] && [ ! -s "$tmp/hold.out" ]; do sleep 0.05; i=$((i + 1)); done
    addr=$(head -n 1 "$tmp/hold.out")
    APIGEN_SERVER=$url APIGEN_TIMEOUT_MS=60000 LD_LIBRARY_PATH="$stubdir" timeout 120 "$foreign" use "$addr" \
        > "$tmp/use.out" 2> "$tmp/use.err"
    urc=$?
    exec 3>&-
    wait "$hpid"
    hrc=$?
fi
kill "$spid"; wait "$spid" 2>/dev/null; spid=
[ "$nrc" = 0 ] && ! grep -qw NO "$tmp/native.out" || fail "natively over the fakes: exit $nrc or a wrong result (the fakes are broken)"
[ "$nrc" = "$frc" ] || fail "native exit $nrc, forwarded exit $frc"
cmp -s "$tmp/native.out" "$tmp/fwd.out" || { diff -u "$tmp/native.out" "$tmp/fwd.out"; fail "outputs differ"; }
grep -q "^matches the CPU reference: yes$" "$tmp/fwd.out" || fail "no result line"
n=$(grep -c "server: [a-z]* new session" "$tmp/server.prog.log")
[ "$n" = 1 ] || fail "$n sessions for one process (want one for both stubs)"
grep -q "server: cudart joined the session of cublas as its API 1\|server: cublas joined the session of cudart as its API 1" "$tmp/server.prog.log" ||
    fail "the second API did not join the first's session"
grep -q "server: cublas joined session\|server: cudart joined session" "$tmp/server.prog.log" || fail "no joined connection"
grep -q "server: cublas\.cublasSgemm_v2 " "$tmp/server.prog.log" || fail "no cuBLAS GEMM reached the server"
grep -q "server: cudart\.cudaMalloc " "$tmp/server.prog.log" || fail "no cudaMalloc reached the server"
grep -q "server: cudart\.cudaStreamCreate " "$tmp/server.prog.log" || fail "no cudaStreamCreate reached the server"
if [ -n "$foreign" ]; then
    [ "$hrc" = 0 ] && [ "$urc" = 0 ] || fail "family_foreign: hold exit $hrc, use exit $urc"
    printf '%s\n' "own memory: cublasSetVector: CUBLAS_STATUS_SUCCESS" "own memory: cublasSgemm_v2: CUBLAS_STATUS_SUCCESS" \
        "another client's memory: cublasSetVector: CUBLAS_STATUS_INVALID_VALUE" \
        "another client's memory: cublasSgemm_v2: CUBLAS_STATUS_INVALID_VALUE" > "$tmp/use.want"
    cmp -s "$tmp/use.want" "$tmp/use.out" || { diff -u "$tmp/use.want" "$tmp/use.out"; fail "another client's cudaMalloc memory is not refused (or the client's own is)"; }
    echo "PASS: another client's cudaMalloc address ($addr) in cuBLAS calls: CUBLAS_STATUS_INVALID_VALUE; the client's own: success"
fi
echo "PASS: $name over $transport: identical stdout ($(wc -l < "$tmp/native.out") lines), exit $nrc; one session of cublas and cudart"
sed 's/^/  | /' "$tmp/native.out"
exit 0
