#!/bin/sh
# tests/cuda/fake_diff.sh SERVER STUB_DIR FAKE PROGRAM TRANSPORT [SERVERS [SED]]
# A differential test without a GPU: runs PROGRAM (linked against the real
# libcudart) natively with the stand-in device FAKE (tests/cuda/fake_device.c
# + fake_arrays.c + fake_peer.c) preloaded into it, then through the cudart
# stub (STUB_DIR) against SERVER with FAKE preloaded into the server, over
# TRANSPORT (unix|tcp|shm), and compares the two outputs byte for byte; both
# runs must exit 0 (the programs check their own results too).
# SERVERS=2 starts two servers, each with FAKE_DEVICE_COUNT=1, and gives the
# program APIGEN_SERVER=url0,url1; the native run then has
# FAKE_DEVICE_COUNT=2 (the same two devices in one process). Otherwise
# FAKE_DEVICE_COUNT from the environment reaches both runs. FAKE_DIFF_REAL_DIR:
# a folder put first on the library path of the native run and the servers
# (the driver's tests: the toolkit's stubs libcuda.so as libcuda.so.1, under
# a stand-in driver). SED: a sed
# script applied to the native output first: the documented differences
# (two servers: no peer access between their devices). DIFF_LAUNCH: a
# launcher that puts the stubs in place itself (scripts/cuda-run), which then
# runs the forwarded program instead of STUB_DIR on its library path.
# FAKE_DIFF_TRIPS="REGEX MAX": the forwarded run is traced (APIGEN_TRACE=1)
# and makes at most MAX round trips of functions matching REGEX between the
# program's "MARK NAME begin" / "MARK NAME end" lines on stderr.
set -u
server=$1 stubdir=$2 fake=$3 prog=$4 transport=$5 nserv=${6:-1} sedscript=${7:-}
real=${FAKE_DIFF_REAL_DIR:-}
lp() { echo "${real:+$real:}${LD_LIBRARY_PATH:-}"; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cudart-fdiff.XXXXXX")
pids=
cleanup() {
    for p in $pids; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
    rm -rf "$tmp"
}
trap cleanup EXIT INT TERM
name=$(basename "$prog")
start() { # index -> prints the url
    i=$1
    case "$transport" in
    unix) url="unix://$tmp/s$i.sock" ;;
    tcp) url="tcp://127.0.0.1:0" ;;
    shm) url="shm://apigen-fdiff-$$-$i" ;;
    *) echo "unknown transport $transport" >&2; exit 2 ;;
    esac
    iso=
    [ "$transport" = shm ] && iso="--isolation thread"
    if [ "$nserv" = 2 ]; then
        # shellcheck disable=SC2086
        FAKE_DEVICE_COUNT=1 LD_LIBRARY_PATH=$(lp) LD_PRELOAD=$fake "$server" --listen "$url" $iso > "$tmp/server$i.log" 2>&1 &
    else
        # shellcheck disable=SC2086
        LD_LIBRARY_PATH=$(lp) LD_PRELOAD=$fake "$server" --listen "$url" $iso > "$tmp/server$i.log" 2>&1 &
    fi
    pids="$pids $!"
    n=0
    while [ $n -lt 100 ]; do
        grep -q "listening" "$tmp/server$i.log" 2>/dev/null && break
        sleep 0.05; n=$((n + 1))
    done
    [ "$transport" = tcp ] && url=$(sed -n 's/.*listening on \([a-z]*:[^ ]*\) .*/\1/p' "$tmp/server$i.log" | head -1)
    echo "$url" > "$tmp/url$i"
}
start 0
urls=$(cat "$tmp/url0")
if [ "$nserv" = 2 ]; then
    start 1
    urls="$urls,$(cat "$tmp/url1")"
fi
if [ "$nserv" = 2 ]; then
    FAKE_DEVICE_COUNT=2 LD_LIBRARY_PATH=$(lp) LD_PRELOAD=$fake timeout 120 "$prog" > "$tmp/native" 2> "$tmp/native.err"
else
    LD_LIBRARY_PATH=$(lp) LD_PRELOAD=$fake timeout 120 "$prog" > "$tmp/native" 2> "$tmp/native.err"
fi
nrc=$?
if [ -n "$sedscript" ]; then
    sed "$sedscript" "$tmp/native" > "$tmp/native.sed" && mv "$tmp/native.sed" "$tmp/native"
fi
trips=${FAKE_DIFF_TRIPS:-}
[ -n "$trips" ] && export APIGEN_TRACE=1
if [ -n "${DIFF_LAUNCH:-}" ]; then # a launcher puts the stubs in place itself (scripts/cuda-run)
    # shellcheck disable=SC2086 # DIFF_LAUNCH: a command and its options
    APIGEN_SERVER=$urls APIGEN_TIMEOUT_MS=60000 timeout 120 $DIFF_LAUNCH "$prog" > "$tmp/out" 2> "$tmp/err"
else
    APIGEN_SERVER=$urls APIGEN_TIMEOUT_MS=60000 LD_LIBRARY_PATH="$stubdir" timeout 120 "$prog" > "$tmp/out" 2> "$tmp/err"
fi
rc=$?
[ -n "${FAKE_DIFF_SHOW:-}" ] && { cat "$tmp/out"; cat "$tmp/err"; }
if [ $nrc != 0 ] || [ $rc != 0 ] || ! cmp -s "$tmp/native" "$tmp/out"; then
    echo "FAIL: $name over $transport ($nserv server(s)): native exit $nrc, forwarded exit $rc"
    diff -u "$tmp/native" "$tmp/out" | sed 's/^/  /'
    echo "  native stderr:"; sed 's/^/    /' "$tmp/native.err"
    echo "  forwarded stderr:"; sed 's/^/    /' "$tmp/err"
    for f in "$tmp"/server*.log; do echo "  $f:"; sed 's/^/    /' "$f"; done
    exit 1
fi
if [ -n "$trips" ]; then
    re=${trips% *} max=${trips##* }
    n=$(awk -v re="$re" '
        /^MARK .* begin$/ { on = 1; next } /^MARK .* end$/ { on = 0 }
        on && $0 ~ "^apigen wire \\[[0-9]+\\]: rt (" re ") " { n++ } END { print n + 0 }' "$tmp/err")
    if [ "$n" -gt "$max" ]; then
        echo "FAIL: $name over $transport: $n round trips of $re between the MARK lines, want at most $max"
        grep -E "^MARK|: rt " "$tmp/err" | sed 's/^/    /' | head -60
        exit 1
    fi
    trips=" ($n round trips of $re in the marked regions, at most $max)"
fi
echo "PASS: $name over $transport ($nserv server(s)): $(wc -l < "$tmp/out") lines, native and forwarded identical$trips"
exit 0
