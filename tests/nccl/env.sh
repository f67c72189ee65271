#!/bin/sh
# nccl.env.*: the application's NCCL_* variables reach its session process
# (specs/nccl/host.c): examples/nccl/collectives with NCCL_DEBUG=INFO,
# NCCL_ALGO=Ring and NCCL_NET_PLUGIN=libnot-applied.so, natively and through
# the stubs to a server whose own environment has none of them, both over
# the stand-ins (tests/nccl/fake_nccl.c prints what it sees at each init, as
# NCCL's INFO lines go to stdout). Forwarded, every rank's NCCL sees
# NCCL_ALGO (a tuning variable) and not NCCL_NET_PLUGIN (it would load a
# library of the client's choice on the server), which the stub names once
# per process; the rest of the output is the native one.
#   env.sh SERVER STUB_DIR LIBDIR PRELOAD TRANSPORT PROGRAM
set -u
server=$1 stubdir=$2 libdir=$3 preload=$4 transport=$5 prog=$6
tmp=$(mktemp -d "${TMPDIR:-/tmp}/nccl-env.XXXXXX")
spid=
cleanup() { [ -n "$spid" ] && kill "$spid" 2>/dev/null && wait "$spid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT INT TERM
set -- NCCL_DEBUG=INFO NCCL_ALGO=Ring NCCL_NET_PLUGIN=libnot-applied.so
env "$@" LD_PRELOAD="$preload" LD_LIBRARY_PATH="$libdir" timeout 120 "$prog" 2 > "$tmp/native" 2>&1
case "$transport" in
unix) url="unix://$tmp/s.sock" ;;
tcp) url="tcp://127.0.0.1:0" ;;
shm) url="shm://apigen-nccl-env-$$" ;;
*) echo "unknown transport $transport"; exit 2 ;;
esac
env -u NCCL_DEBUG -u NCCL_ALGO -u NCCL_NET_PLUGIN LD_PRELOAD="$preload" LD_LIBRARY_PATH="$libdir" \
    "$server" --listen "$url" > "$tmp/server.log" 2>&1 &
spid=$!
i=0
while [ $i -lt 200 ] && ! grep -q listening "$tmp/server.log" 2>/dev/null; do sleep 0.05; i=$((i + 1)); done
[ "$transport" = tcp ] && url=$(sed -n 's/.*listening on \([a-z]*:[^ ]*\) .*/\1/p' "$tmp/server.log" | head -1)
env "$@" APIGEN_SERVER=$url LD_LIBRARY_PATH="$stubdir" timeout 120 "$prog" 2 > "$tmp/fwd" 2> "$tmp/fwd.err"
frc=$?
fail() {
    echo "FAIL over $transport: $1 (forwarded exit $frc)"
    echo "  native:"; sed 's/^/    /' "$tmp/native"
    echo "  forwarded:"; sed 's/^/    /' "$tmp/fwd"
    echo "  forwarded stderr:"; sed 's/^/    /' "$tmp/fwd.err"
    echo "  server log:"; sed 's/^/    /' "$tmp/server.log"
    exit 1
}
[ "$frc" = 0 ] || fail "the program failed"
[ "$(grep -c '^fake NCCL INFO rank [01]: NCCL_ALGO Ring, NCCL_NET_PLUGIN libnot-applied.so$' "$tmp/native")" = 2 ] ||
    fail "natively the stand-in did not see the variables"
[ "$(grep -c '^fake NCCL INFO rank [01]: NCCL_ALGO Ring, NCCL_NET_PLUGIN unset$' "$tmp/fwd")" = 2 ] ||
    fail "forwarded, each rank's NCCL must see NCCL_ALGO and not NCCL_NET_PLUGIN"
[ "$(grep -c 'not applied to NCCL on the server.*: NCCL_NET_PLUGIN$' "$tmp/fwd.err")" = 2 ] ||
    fail "each process must name NCCL_NET_PLUGIN once"
grep -v '^fake NCCL INFO' "$tmp/native" > "$tmp/n2"
grep -v '^fake NCCL INFO' "$tmp/fwd" > "$tmp/f2"
cmp -s "$tmp/n2" "$tmp/f2" || { diff -u "$tmp/n2" "$tmp/f2"; fail "outputs differ"; }
echo "PASS over $transport: NCCL_ALGO applied in each rank's session process, NCCL_NET_PLUGIN not (named), output identical"
exit 0
