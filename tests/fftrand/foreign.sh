#!/bin/sh
# Another client's device memory: PROGRAM hold (examples/cufft|curand
# badinput) allocates through the stubs and holds the allocation; a second
# client, PROGRAM ADDRESS, with no memory of its own, hands that address to
# the library (cufftExecC2C, curandGenerateUniform). The second must get
# EXPECTED (the library's invalid-value error from the server's range
# check), the first must end cleanly, and the server must run on.
#   foreign.sh SERVER STUB_DIR LIBDIR PRELOAD TRANSPORT EXPECTED PROGRAM
set -u
server=$1 stubdir=$2 libdir=$3 preload=$4 transport=$5 expected=$6 prog=$7
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fftrand-foreign.XXXXXX")
spid= apid=
cleanup() {
    exec 3>&- 2>/dev/null
    [ -n "$apid" ] && kill "$apid" 2>/dev/null
    [ -n "$spid" ] && kill "$spid" 2>/dev/null && wait "$spid" 2>/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT INT TERM
case "$transport" in
unix) url="unix://$tmp/s.sock" ;;
tcp) url="tcp://127.0.0.1:0" ;;
shm) url="shm://apigen-fftrand-foreign-$$" ;;
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
mkfifo "$tmp/in"
APIGEN_SERVER=$url LD_LIBRARY_PATH="$stubdir" timeout 120 "$prog" hold < "$tmp/in" > "$tmp/a.out" 2> "$tmp/a.err" &
apid=$!
exec 3> "$tmp/in"
i=0
while [ $i -lt 400 ] && ! grep -q . "$tmp/a.out" 2>/dev/null; do
    sleep 0.05; i=$((i + 1))
done
addr=$(head -n 1 "$tmp/a.out")
APIGEN_SERVER=$url LD_LIBRARY_PATH="$stubdir" timeout 120 "$prog" "$addr" > "$tmp/b.out" 2> "$tmp/b.err"
brc=$?
exec 3>&-
wait "$apid"
arc=$?
apid=
name=$(basename "$(dirname "$prog")")/$(basename "$prog")
case $addr in 0x*) ;; *) arc="no address ($addr)" ;; esac
if [ "$arc" != 0 ] || [ $brc != 0 ] || ! cmp -s "$expected" "$tmp/b.out" || ! kill -0 "$spid" 2>/dev/null; then
    echo "FAIL: $name over $transport: holder exit $arc, second client exit $brc"
    diff -u "$expected" "$tmp/b.out" | sed 's/^/  /'
    kill -0 "$spid" 2>/dev/null || echo "  the server is gone"
    for f in a.out a.err b.err server.log; do echo "  $f:"; sed 's/^/    /' "$tmp/$f"; done
    exit 1
fi
echo "PASS: $name over $transport: another client's address ($addr) refused, the holder ended cleanly"
sed 's/^/  | /' "$tmp/b.out"
exit 0
