#!/bin/sh
# One program natively, forwarded while recorded, and replayed (no real
# library): the three outputs and exit statuses must be equal, the native
# run must succeed, and the replay must match every recorded request.
#   roundtrip.sh SERVER STUB_DIR NATIVE_LIB_DIR|- PROG [OTHER_PROG|- [ARGS...]]
# With OTHER_PROG: PROG is then replayed against OTHER_PROG's recording,
# which must fail at the first request that differs (a mutation test).
# ARGS: PROG's arguments (OTHER_PROG runs without).
set -u
server=$1 stub=$2 native=$3 prog=$4 other=${5:-}
[ "$other" = - ] && other=
[ $# -gt 5 ] && shift 5 || set --
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/apigen-roundtrip.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
export POCL_CACHE_DIR=$tmp/pocl-cache
name=$(basename "$prog")
# the native run is the real library's alone: no LeakSanitizer exit check
# (its tracer crashed in PoCL programs: tests/opencl/opencl_e2e.sh)
nasan="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
if [ "$native" = - ]; then
    env -u APIGEN_SERVER ASAN_OPTIONS="$nasan" timeout 120 "$prog" "$@" > "$tmp/native" 2> "$tmp/native.err"
else
    env -u APIGEN_SERVER ASAN_OPTIONS="$nasan" LD_LIBRARY_PATH="$native" timeout 120 "$prog" "$@" \
        > "$tmp/native" 2> "$tmp/native.err"
fi
echo $? > "$tmp/native.rc"
[ "$(cat "$tmp/native.rc")" = 0 ] ||
    { echo "FAIL: $name natively: exit $(cat "$tmp/native.rc")"; cat "$tmp/native.err"; exit 1; }
if [ -n "$other" ]; then
    sh "$here/replay.sh" record "$server" "$stub" "$tmp/other.rec" "$tmp/other.out" -- "$other" || exit 1
    sh "$here/replay.sh" check "$server" "$stub" "$tmp/other.rec" "$tmp/native" -- "$prog" "$@" > "$tmp/check" 2>&1
    rc=$?
    sed 's/^/  | /' "$tmp/check" | tail -12
    [ $rc != 0 ] || { echo "FAIL: $name replayed against $(basename "$other")'s recording passed"; exit 1; }
    grep -q "FAIL replay: .*request [0-9]* (recorded" "$tmp/check" ||
        { echo "FAIL: $name against $(basename "$other")'s recording failed, but not at a request"; exit 1; }
    echo "PASS: $name against $(basename "$other")'s recording fails at the first request that differs"
    exit 0
fi
sh "$here/replay.sh" record "$server" "$stub" "$tmp/rec" "$tmp/fwd" -- "$prog" "$@" || exit 1
if ! cmp -s "$tmp/native" "$tmp/fwd" || ! cmp -s "$tmp/native.rc" "$tmp/fwd.rc"; then
    echo "FAIL: $name forwarded (while recorded) differs from native"
    diff -u "$tmp/native" "$tmp/fwd"
    exit 1
fi
sh "$here/replay.sh" check "$server" "$stub" "$tmp/rec" "$tmp/native" -- "$prog" "$@"
