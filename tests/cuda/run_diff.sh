#!/bin/sh
# One differential run: PROGRAM natively (the toolkit's libcudart) and
# through the stub to a fresh apigen-server-cudart over TRANSPORT (unix|tcp|shm|tls;
# tls: throwaway certificates from tests/security/tls_certs.sh, exit 77 without openssl);
# stdout and the exit status must be identical. Without a GPU both runs take
# the "no CUDA-capable device / insufficient driver" path, which checks that
# errors are forwarded; on a GPU it checks the results.
# A native run that fails passes only as the failure EXPECT declares
# (expected_failure.sh: expect-no-gpu).
#   run_diff.sh SERVER STUB_DIR REAL_LIB_DIR PROGRAM TRANSPORT [EXPECT]
set -u
server=$1 stubdir=$2 realdir=$3 prog=$4 transport=$5 expect=${6:-}
. "$(dirname "$0")/expected_failure.sh"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cudart-diff.XXXXXX")
spid=
cleanup() { [ -n "$spid" ] && kill "$spid" 2>/dev/null && wait "$spid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT INT TERM
name=$(basename "$prog")
LD_LIBRARY_PATH="$realdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" timeout 120 "$prog" > "$tmp/native.out" 2> "$tmp/native.err"
nrc=$?
case "$transport" in
unix) url="unix://$tmp/s.sock" ;;
tcp) url="tcp://127.0.0.1:0" ;; # the kernel picks a free port; the server names it
shm) url="shm://apigen-cudart-$$" ;;
tls) url="tls://127.0.0.1:0" ;;
*) echo "unknown transport $transport"; exit 2 ;;
esac
iso=
if [ "$transport" = tls ]; then
    "$(dirname "$0")/../security/tls_certs.sh" "$tmp/certs" > "$tmp/certs.log" 2>&1
    rc=$?
    [ $rc = 0 ] || { cat "$tmp/certs.log"; exit $rc; }
    APIGEN_TLS_CA=$tmp/certs/ca.pem
    export APIGEN_TLS_CA
    iso="--tls-cert $tmp/certs/server.pem --tls-key $tmp/certs/server.key"
fi
[ "$transport" = shm ] && iso="--isolation thread"   # shm:// sessions cannot move to a session process yet
# shellcheck disable=SC2086
"$server" --listen "$url" $iso > "$tmp/server.log" 2>&1 &
spid=$!
i=0
while [ $i -lt 100 ]; do
    grep -q "listening" "$tmp/server.log" 2>/dev/null && break
    sleep 0.05; i=$((i + 1))
done
case "$transport" in tcp|tls) url=$(sed -n 's/.*listening on \([a-z]*:[^ ]*\) .*/\1/p' "$tmp/server.log" | head -1) ;; esac
grep -q "no TLS support" "$tmp/server.log" && { echo "SKIP: this build has no TLS"; exit 77; }
APIGEN_SERVER=$url APIGEN_TIMEOUT_MS=60000 LD_LIBRARY_PATH="$stubdir" timeout 120 "$prog" > "$tmp/fwd.out" 2> "$tmp/fwd.err"
frc=$?
if [ "$nrc" != "$frc" ] || ! cmp -s "$tmp/native.out" "$tmp/fwd.out"; then
    echo "FAIL: $name over $transport: native exit $nrc, forwarded exit $frc"
    diff -u "$tmp/native.out" "$tmp/fwd.out" | sed 's/^/  /'
    echo "  forwarded stderr:"; sed 's/^/    /' "$tmp/fwd.err"
    echo "  server log:"; sed 's/^/    /' "$tmp/server.log"
    exit 1
fi
expected_failure "$name" "$nrc" "$tmp/native.out" "$expect"
echo "PASS: $name over $transport: identical stdout ($(wc -l < "$tmp/native.out") lines), exit $nrc"
sed 's/^/  | /' "$tmp/native.out"
exit 0
