#!/bin/sh
# Bad input through the NVRTC and nvJitLink stubs to SERVER over TRANSPORT:
# examples/nvrtc/badinput (forged and destroyed programs and links, header
# counts that do not match the arrays, options naming files, an include of
# a file that exists only where the SERVER runs, spelled by a macro so that
# the stub cannot send it) must print exactly EXPECTED and exit 0; the
# server must still run and must log why it refused that file.
#   badinput.sh SERVER STUB_DIR NODRIVER_DIR TRANSPORT EXPECTED PROGRAM
set -u
server=$1 stubdir=$2 nodriver=$3 transport=$4 expected=$5 prog=$6
here=$(dirname "$0")
. "$here/start_server.sh"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/nvrtc-bad.XXXXXX")
spid=
trap 'stop_server; rm -rf "$tmp"' EXIT INT TERM
mkdir -p "$tmp/server-only" "$tmp/server"
echo '#define SECRET_VALUE 4242' > "$tmp/server-only/secret.h"
NODRIVER=
ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1 ' || NODRIVER=$nodriver
start_server "$server" "$transport" "$tmp/server"
APIGEN_SERVER=$url LD_LIBRARY_PATH="$stubdir" timeout 120 "$prog" "$tmp/server-only/secret.h" > "$tmp/out" 2> "$tmp/err"
rc=$?
if [ $rc != 0 ] || ! cmp -s "$expected" "$tmp/out" || ! kill -0 "$spid" 2>/dev/null ||
   ! grep -q "refused to the compile ('$tmp/server-only/secret.h'" "$tmp/server/server.log"; then
    echo "FAIL: badinput over $transport: exit $rc"
    diff -u "$expected" "$tmp/out" | sed 's/^/  /'
    kill -0 "$spid" 2>/dev/null || echo "  the server is gone"
    echo "  stderr:"; sed 's/^/    /' "$tmp/err"
    echo "  server log:"; sed 's/^/    /' "$tmp/server/server.log"
    exit 1
fi
echo "PASS: badinput over $transport: every bad input failed cleanly, the server runs on and read no file of its own"
sed 's/^/  | /' "$tmp/out"
grep "refused" "$tmp/server/server.log" | sed 's/^/  server: /'
exit 0
