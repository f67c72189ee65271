#!/bin/sh
# Record and replay of the exa demo, and the mutation tests that prove a
# replay fails when the guest does not do what it did when recorded.
#
#   exa.sh MODE BUILD_DIR [MUTANT_LIB]
#
#   demo            the demo natively and forwarded while recorded: same output; then
#                   replayed (no real library): the same output again, every request matched
#   mutant:NAME     the demo with tests/replay/mutant_exa.c preloaded (REPLAY_MUTANT=NAME)
#                   against the clean recording: the replay must fail, for the reason
#                   expected of that mutant (below)
#   other_recording the demo against a recording of exa_edge: must fail at the first request
#   bad_recording   a cut, a future-format and a foreign file: --replay refuses each (exit 2)
#   stale_recording the clean demo against a recording of a demo that stopped early: its
#                   requests go past the end of the recording
#   reordered       the demo recorded with its worker1 thread started late and replayed
#                   with worker0 started late (REPLAY_SLOW in MUTANT_LIB): the other
#                   interleaving of its two threads must replay to the native output too,
#                   and so must both threads at once
set -u
mode=${1:?usage: exa.sh MODE BUILD_DIR [MUTANT_LIB]}
build=$(cd "${2:?}" && pwd)
mutlib=${3:-}
here=$(cd "$(dirname "$0")" && pwd)
server=$build/examples/exa/apigen-server-exa
stub=$build/stub
demo=$build/examples/exa/exa_demo
edge=$build/examples/exa/exa_edge
tmp=$(mktemp -d "${TMPDIR:-/tmp}/exa-replay.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
for f in "$server" "$stub/libexa.so.1" "$demo" "$edge"; do
    [ -e "$f" ] || { echo "FAIL: missing $f"; exit 1; }
done

record() { # rec out prog [env...]
    sh "$here/replay.sh" record "$server" "$stub" "$1" "$2" -- "$3" || exit 1
}

# Must fail, and for the expected reason (a line of replay.sh's output).
expect_fail() { # reason-regex label, then replay.sh check arguments
    want=$1 label=$2
    shift 2
    sh "$here/replay.sh" check "$@" > "$tmp/check.log" 2>&1
    rc=$?
    sed 's/^/  | /' "$tmp/check.log" | tail -30
    [ $rc != 0 ] || { echo "FAIL: $label: the replay passed; it must fail"; exit 1; }
    grep -Eq "$want" "$tmp/check.log" || { echo "FAIL: $label failed, but not with /$want/"; exit 1; }
    echo "PASS: $label: the replay fails as it must (/$want/)"
}

case $mode in
demo)
    env -u APIGEN_SERVER LD_LIBRARY_PATH="$build/real" timeout 60 "$demo" > "$tmp/native.out" 2> "$tmp/native.err"
    echo $? > "$tmp/native.out.rc"
    [ "$(cat "$tmp/native.out.rc")" = 0 ] || { echo "FAIL: native demo exit $(cat "$tmp/native.out.rc")"; cat "$tmp/native.err"; exit 1; }
    record "$tmp/demo.rec" "$tmp/fwd.out" "$demo"
    cmp -s "$tmp/native.out" "$tmp/fwd.out" && cmp -s "$tmp/native.out.rc" "$tmp/fwd.out.rc" ||
        { echo "FAIL: forwarded (recorded) output differs from native"; diff -u "$tmp/native.out" "$tmp/fwd.out"; exit 1; }
    sh "$here/replay.sh" check "$server" "$stub" "$tmp/demo.rec" "$tmp/native.out" -- "$demo" || exit 1
    ;;
mutant:*)
    name=${mode#mutant:}
    [ -f "$mutlib" ] || { echo "FAIL: missing the mutant library '$mutlib'"; exit 1; }
    record "$tmp/demo.rec" "$tmp/fwd.out" "$demo"
    case $name in
    error_all) why="FAIL replay: .*never started" ;;   # nothing was sent
    skip_call) why="FAIL replay: .*recorded exaLaunchFill.*got call" ;;
    # the same requests, but the application missed a callback / an error: its
    # output differs, or it stops early and the recorded requests never come
    skip_callback|drop_async) why="FAIL (output|replay: .*never sent)" ;;
    *) echo "unknown mutant $name"; exit 2 ;;
    esac
    REPLAY_MUTANT=$name LD_PRELOAD=$mutlib expect_fail "$why" "mutant $name" \
        "$server" "$stub" "$tmp/demo.rec" "$tmp/fwd.out" -- "$demo"
    ;;
reordered)
    [ -f "$mutlib" ] || { echo "FAIL: missing the mutant library '$mutlib'"; exit 1; }
    env -u APIGEN_SERVER LD_LIBRARY_PATH="$build/real" timeout 60 "$demo" > "$tmp/native.out" 2> "$tmp/native.err"
    echo $? > "$tmp/native.out.rc"
    [ "$(cat "$tmp/native.out.rc")" = 0 ] || { echo "FAIL: native demo exit $(cat "$tmp/native.out.rc")"; cat "$tmp/native.err"; exit 1; }
    # worker0 runs its whole thread (callback included) before worker1 starts; in the
    # replay worker1 does: callback ids swap, every callback of one thread is due
    # (by the session's request count) before the other thread began
    REPLAY_SLOW=worker1:300 LD_PRELOAD=$mutlib record "$tmp/demo.rec" "$tmp/fwd.out" "$demo"
    cmp -s "$tmp/native.out" "$tmp/fwd.out" && cmp -s "$tmp/native.out.rc" "$tmp/fwd.out.rc" ||
        { echo "FAIL: forwarded (recorded) output differs from native"; diff -u "$tmp/native.out" "$tmp/fwd.out"; exit 1; }
    REPLAY_SLOW=worker0:300 LD_PRELOAD=$mutlib sh "$here/replay.sh" check "$server" "$stub" "$tmp/demo.rec" "$tmp/native.out" -- "$demo" || exit 1
    # and with the threads at once: when the recording server reused worker0's freed
    # memory for worker1, both hold one address now (route.c counts it twice)
    sh "$here/replay.sh" check "$server" "$stub" "$tmp/demo.rec" "$tmp/native.out" -- "$demo" || exit 1
    ;;
other_recording)
    record "$tmp/edge.rec" "$tmp/edge.out" "$edge"
    record "$tmp/demo.rec" "$tmp/demo.out" "$demo"
    expect_fail "FAIL replay: .*request 1 .*(got call|differs)" "demo against exa_edge's recording" \
        "$server" "$stub" "$tmp/edge.rec" "$tmp/demo.out" -- "$demo"
    ;;
stale_recording)
    [ -f "$mutlib" ] || { echo "FAIL: missing the mutant library '$mutlib'"; exit 1; }
    # a recording of a demo that stopped early (it lost an async error)
    REPLAY_MUTANT=drop_async LD_PRELOAD=$mutlib record "$tmp/demo.rec" "$tmp/early.out" "$demo"
    record "$tmp/clean.rec" "$tmp/demo.out" "$demo"
    expect_fail "FAIL replay: .*past the end of the recording" "clean demo against a recording that stops early" \
        "$server" "$stub" "$tmp/demo.rec" "$tmp/demo.out" -- "$demo"
    ;;
bad_recording)
    # a recording cut short, one of another format, a stranger's file: refused
    # at start with the reason (exit 2), never served
    record "$tmp/demo.rec" "$tmp/demo.out" "$demo"
    size=$(wc -c < "$tmp/demo.rec")
    head -c $((size - 5)) "$tmp/demo.rec" > "$tmp/cut.rec"
    printf 'APIGEN-RECORD\n\002\000\000\000' > "$tmp/v2.rec"
    printf 'hello\n' > "$tmp/text.rec"
    for f in cut:"cut short" v2:"recording format 2" text:"not an apigen recording"; do
        name=${f%%:*} want=${f#*:}
        timeout 20 "$server" --listen "unix://$tmp/bad.sock" --replay "$tmp/$name.rec" > "$tmp/$name.log" 2>&1
        rc=$?
        [ $rc = 2 ] && grep -q "$want" "$tmp/$name.log" ||
            { echo "FAIL: --replay of a $name recording: exit $rc"; cat "$tmp/$name.log"; exit 1; }
        echo "PASS: a $name recording is refused: $(cat "$tmp/$name.log")"
    done
    ;;
*)
    echo "unknown mode $mode"; exit 2 ;;
esac
exit 0
