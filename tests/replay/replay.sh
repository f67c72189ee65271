#!/bin/sh
# Record and replay one guest program (docs/internals.md, "Record and replay").
#
#   replay.sh record SERVER STUB_DIR REC OUT -- PROG [ARGS...]
#       starts SERVER --record REC on a unix socket, runs PROG through the stub
#       (LD_LIBRARY_PATH=STUB_DIR), writes its stdout to OUT and its exit
#       status to OUT.rc, stops the server (the recording is then complete).
#   replay.sh check SERVER STUB_DIR REC EXPECTED -- PROG [ARGS...]
#       starts SERVER --replay REC, runs PROG through the stub, and passes
#       (exit 0) only if the replaying server exits 0 (every recorded request
#       came, in order, and nothing else) and PROG's stdout and exit status
#       equal EXPECTED and EXPECTED.rc. The last line it prints says why it
#       failed: "FAIL replay: ..." (the server's message) or "FAIL output".
#
# Programs run under `setarch -R` (no address randomization) where it works,
# so that a host address a guest library sends comes out the same.
# REPLAY_TIMEOUT: seconds a program may run (default 60).
# REPLAY_SERVER_LIBS: LD_LIBRARY_PATH for the server (default none: the
# server finds its vendor library as installed). A server linked against a
# library this machine lacks (apigen-server-cuda and libcuda.so.1 in CI) gets
# a stand-in there: a replaying server never calls it.
# REPLAY_SERVER_PRELOAD: LD_PRELOAD for the server (a stand-in device to
# record against where there is no GPU, e.g. tests/cuda/driver/fake_driver.c).
# REPLAY_GUEST_UNSET: name prefixes (e.g. "CUDA_ APIGEN_") of environment
# variables removed from the program's environment, so that what the GPU
# machine's shell set (CUDA_MODULE_LOADING, APIGEN_TRACE, ...) cannot make a
# guest library send other requests than CI's replay of the same program.
# REPLAY_SHIFT: a library preloaded into the program (tests/replay/shift.c)
# that moves its mappings and heap blocks, as another machine's libraries
# would: a replay that passes with it does not depend on host addresses.
set -u
cmd=${1:?usage: replay.sh record|check SERVER STUB_DIR REC OUT|EXPECTED -- PROG [ARGS...]}
server=$2 stubdir=$3 rec=$4 out=$5
[ "${6:-}" = "--" ] || { echo "replay.sh: expected -- before the program"; exit 2; }
shift 6
tmo=${REPLAY_TIMEOUT:-60}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/apigen-replay.XXXXXX")
spid=
cleanup() { [ -n "$spid" ] && kill -KILL "$spid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
trap 'exit 130' INT TERM
norand=
setarch "$(uname -m)" -R true 2>/dev/null && norand="setarch $(uname -m) -R"

start() { # server options...
    env -u LD_LIBRARY_PATH -u APIGEN_SERVER \
        ${REPLAY_SERVER_LIBS:+LD_LIBRARY_PATH="$REPLAY_SERVER_LIBS"} \
        ${REPLAY_SERVER_PRELOAD:+LD_PRELOAD="$REPLAY_SERVER_PRELOAD"} \
        "$server" --listen "unix://$tmp/s.sock" "$@" > "$tmp/server.log" 2>&1 &
    spid=$!
    i=0
    while ! grep -q "listening on" "$tmp/server.log" 2>/dev/null; do
        if ! kill -0 "$spid" 2>/dev/null || [ $i -ge 600 ]; then
            echo "FAIL replay: the server did not start:"; sed 's/^/  /' "$tmp/server.log"
            exit 1
        fi
        sleep 0.05; i=$((i + 1))
    done
}

# the variables REPLAY_GUEST_UNSET names, as `-u NAME` arguments of env
unset_args() {
    for p in ${REPLAY_GUEST_UNSET:-}; do
        env | sed -n "s/^\(${p}[A-Za-z0-9_]*\)=.*/-u \1/p"
    done
}

guest() { # stdout file, then the program
    o=$1
    shift
    # shellcheck disable=SC2086,SC2046 # norand: a command and its arguments, or nothing
    env $(unset_args) APIGEN_SERVER="unix://$tmp/s.sock" APIGEN_TIMEOUT_MS=30000 LD_LIBRARY_PATH="$stubdir" \
        ${REPLAY_SHIFT:+LD_PRELOAD="$REPLAY_SHIFT${LD_PRELOAD:+ $LD_PRELOAD}"} \
        timeout -k 5 "$tmo" $norand "$@" > "$o" 2> "$tmp/guest.err"
    echo $? > "$o.rc"
}

# Waits up to 20 s for the server to exit by itself (replay: once it has seen
# the guest's connections close, which a loaded machine or a sanitizer build
# can delay by seconds) or stops it (record; a replay that waits for more: it
# reports what never came). Sets src.
finish() {
    i=0
    if [ "$1" = stop ]; then kill -TERM "$spid" 2>/dev/null; fi
    while kill -0 "$spid" 2>/dev/null && [ $i -lt 400 ]; do sleep 0.05; i=$((i + 1)); done
    kill -0 "$spid" 2>/dev/null && kill -TERM "$spid" 2>/dev/null
    wait "$spid"
    src=$?
    spid=
}

case $cmd in
record)
    start --record "$rec"
    guest "$out" "$@"
    finish stop
    if [ "$src" != 0 ] || grep -q "recording stops here\|recording is incomplete" "$tmp/server.log"; then
        echo "FAIL record: server exit $src"; sed 's/^/  /' "$tmp/server.log"; exit 1
    fi
    echo "recorded $(basename "$1"): $(wc -c < "$rec") bytes, exit $(cat "$out.rc")"
    ;;
check)
    [ -f "$rec" ] && [ -f "$out" ] && [ -f "$out.rc" ] || { echo "FAIL: missing $rec, $out or $out.rc"; exit 2; }
    start --replay "$rec"
    guest "$tmp/got" "$@"
    finish wait
    if [ "$src" != 0 ]; then
        echo "  guest stderr:"; sed 's/^/    /' "$tmp/guest.err" | tail -20
        echo "  replaying server:"; sed 's/^/    /' "$tmp/server.log" | tail -20
        echo "FAIL replay: $(grep -m1 "REPLAY FAILED" "$tmp/server.log" || echo "server exit $src")"
        exit 1
    fi
    if ! cmp -s "$out" "$tmp/got" || ! cmp -s "$out.rc" "$tmp/got.rc"; then
        echo "  exit: expected $(cat "$out.rc"), got $(cat "$tmp/got.rc")"
        diff -u "$out" "$tmp/got" | head -40 | sed 's/^/  /'
        echo "  guest stderr:"; sed 's/^/    /' "$tmp/guest.err" | tail -20
        echo "FAIL output: $(basename "$1") under replay differs from the expected output"
        exit 1
    fi
    echo "PASS: $(basename "$1") replayed: $(grep -m1 "complete" "$tmp/server.log" | sed 's/.*complete: //'), same output ($(wc -l < "$out") lines), exit $(cat "$out.rc")"
    ;;
*)
    echo "replay.sh: unknown command $cmd"; exit 2 ;;
esac
exit 0
