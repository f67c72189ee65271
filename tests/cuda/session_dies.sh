#!/bin/sh
# A client's session dies, the server goes on: one apigen-server-cudart
# (a process per session: the cudart spec says `isolation: process`);
#   1. a client's session process is killed with SIGSEGV (what a crash in the
#      real library, or a kernel fault's sticky error, is confined to): that
#      client's calls fail promptly with cudaErrorDevicesUnavailable;
#   2. another client is killed with SIGKILL mid-session;
# after each, PROGRAM forwarded must print what it prints natively, and at the
# end no session process is left.
#   session_dies.sh SERVER STUB_DIR REAL_LIB_DIR HOLD PROGRAM
set -u
server=$1 stubdir=$2 realdir=$3 hold=$4 prog=$5
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cudart-sess.XXXXXX")
spid=
cleanup() { [ -n "$spid" ] && kill "$spid" 2>/dev/null && wait "$spid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT INT TERM
fail() { echo "FAIL: $*"; echo "  server log:"; sed 's/^/    /' "$tmp/server.log"; exit 1; }
url="unix://$tmp/s.sock"
"$server" --listen "$url" > "$tmp/server.log" 2>&1 &
spid=$!
i=0
while [ $i -lt 100 ] && ! grep -q listening "$tmp/server.log" 2>/dev/null; do sleep 0.05; i=$((i + 1)); done
grep -q "a process per session" "$tmp/server.log" || fail "the cudart server does not run a process per session by default"
children() { cat /proc/"$spid"/task/*/children 2>/dev/null; }
wait_ready() { i=0; while [ $i -lt 200 ] && ! grep -q ready "$1" 2>/dev/null; do sleep 0.05; i=$((i + 1)); done; grep -q ready "$1"; }
LD_LIBRARY_PATH="$realdir" timeout 120 "$prog" > "$tmp/native.out" 2>&1
nrc=$?
forwarded() { # tag
    APIGEN_SERVER=$url LD_LIBRARY_PATH="$stubdir" timeout 120 "$prog" > "$tmp/$1.out" 2> "$tmp/$1.err"
    rc=$?
    if [ "$rc" != "$nrc" ] || ! cmp -s "$tmp/native.out" "$tmp/$1.out"; then
        diff -u "$tmp/native.out" "$tmp/$1.out"
        fail "$1: forwarded run differs from native (exit $rc vs $nrc)"
    fi
}

# 1. the session process of a client crashes
APIGEN_SERVER=$url LD_LIBRARY_PATH="$stubdir" "$hold" > "$tmp/h1.out" 2> "$tmp/h1.err" &
h1=$!
wait_ready "$tmp/h1.out" || fail "hold client 1 never got ready: $(cat "$tmp/h1.err")"
victim=$(children)
[ -n "$victim" ] || fail "no session process for a connected client"
kill -SEGV $victim
wait $h1
h1rc=$?
[ "$h1rc" = 3 ] && grep -q lost "$tmp/h1.out" || fail "client 1 (its session process crashed) exit $h1rc, not 'lost'"
# A sanitizer build turns the SIGSEGV into its own report and abort (signal 6).
# The client may see the lost connection before the server has reaped the
# session process and logged it: wait for the line.
i=0
while [ $i -lt 100 ] && ! grep -Eq "killed by signal (11|6);" "$tmp/server.log"; do sleep 0.05; i=$((i + 1)); done
grep -Eq "killed by signal (11|6);" "$tmp/server.log" || fail "the crashed session process was not logged"
forwarded after_crash

# 2. a client dies mid-session
APIGEN_SERVER=$url LD_LIBRARY_PATH="$stubdir" "$hold" > "$tmp/h2.out" 2> "$tmp/h2.err" &
h2=$!
wait_ready "$tmp/h2.out" || fail "hold client 2 never got ready"
kill -KILL $h2
wait $h2 2>/dev/null
forwarded after_client_killed

i=0
# a session process exits after its client (seconds under a sanitizer on a loaded machine)
while [ $i -lt 400 ] && [ -n "$(children)" ]; do sleep 0.05; i=$((i + 1)); done
[ -z "$(children)" ] || { for c in $(children); do echo "leftover $c: $(tr "\0" " " < /proc/$c/cmdline) threads=$(ls /proc/$c/task | wc -l)"; cat /proc/$c/task/*/wchan; echo; ls -l /proc/$c/fd; done; fail "session processes left after their clients ended: $(children)"; }
kill -0 "$spid" 2>/dev/null || fail "the server died"
echo "PASS: the server answered after a session process crashed and after a client was killed ($(basename "$prog"): identical to native, exit $nrc)"
