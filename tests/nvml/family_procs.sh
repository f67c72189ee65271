#!/bin/sh
# Processes as a guest sees them on the CUDA family's server (NVML and the
# runtime in one session), no GPU: the fake NVML (APIGEN_FAKE_NVML_PROCS: the
# processes that initialized it) and the fake runtime (tests/cuda/fake_device.c
# preloaded into the server).
#   family_procs.sh SERVER STUB_DIR FAKE_DEVICE NODRIVER_DIR HOLD PROCS
# HOLD (tests/nvml/cuda_hold.c) holds 1 MiB of device memory through the
# runtime stub; PROCS (tests/nvml/procs.c) lists GPU 0's processes meanwhile.
#  - --isolation process: the holder's session process is shown as the
#    holder (its pid and argv[0]) with the memory NVML reports for it, the
#    lister's own as itself;
#  - --isolation thread: one server process for both; the holder (it holds
#    device memory) is shown with memory N/A, the lister (it holds none) not;
#    utilization samples and accounting leave the shared process out.
set -u
server=$1 stubdir=$2 fakedev=$3 nodriver=$4 hold=$5 procs=$6
tmp=$(mktemp -d "${TMPDIR:-/tmp}/nvml-fprocs.XXXXXX")
spid='' hpid=''
cleanup() {
    exec 3>&- 2>/dev/null
    [ -n "$hpid" ] && kill "$hpid" 2>/dev/null
    [ -n "$spid" ] && kill "$spid" 2>/dev/null && wait "$spid" 2>/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT INT TERM
fail() { echo "FAIL: $*"; for f in "$tmp"/*.out "$tmp"/*.err "$tmp"/*.log; do [ -f "$f" ] && { echo "---- $f"; sed 's/^/  /' "$f"; }; done; exit 1; }
for iso in process thread; do
    mkdir -p "$tmp/p.$iso"
    APIGEN_FAKE_NVML_PROCS="$tmp/p.$iso" FAKE_DEVICE_COUNT=2 LD_PRELOAD="$fakedev" LD_LIBRARY_PATH="$nodriver" \
        "$server" --listen "unix://$tmp/$iso.sock" --isolation $iso > "$tmp/server.$iso.log" 2>&1 &
    spid=$!
    i=0; while [ $i -lt 200 ] && ! grep -q listening "$tmp/server.$iso.log"; do sleep 0.05; i=$((i + 1)); done
    grep -q listening "$tmp/server.$iso.log" || fail "the server ($iso) did not start"
    export APIGEN_SERVER="unix://$tmp/$iso.sock" APIGEN_TIMEOUT_MS=30000
    rm -f "$tmp/hold.in"; mkfifo "$tmp/hold.in"
    LD_LIBRARY_PATH="$stubdir" "$hold" < "$tmp/hold.in" > "$tmp/hold.$iso.out" 2> "$tmp/hold.$iso.err" &
    hpid=$!
    exec 3> "$tmp/hold.in"
    i=0; while [ $i -lt 200 ] && ! grep -q '^ready$' "$tmp/hold.$iso.out"; do sleep 0.05; i=$((i + 1)); done
    grep -q '^ready$' "$tmp/hold.$iso.out" || fail "the holder did not start ($iso)"
    LD_LIBRARY_PATH="$stubdir" timeout 60 "$procs" list "$hpid" > "$tmp/list.$iso.out" 2> "$tmp/list.$iso.err" ||
        fail "the lister failed ($iso)"
    exec 3>&-; wait "$hpid"; hpid=''
    unset APIGEN_SERVER
    kill "$spid"; wait "$spid" 2>/dev/null; spid=''
    grep -q '^    other' "$tmp/list.$iso.out" && fail "a process that is no guest's was shown ($iso)"
    if [ $iso = process ]; then
        want="compute v3: Success count 2|    self name =argv0 memory 1073741824|    holder name =argv0 memory 1073741824|detail list: Success count 2|accounting pids: Success count 2|accounting stats of holder: Success max memory 1073741824 running 1|processes utilization: Success count 2"
    else
        want="compute v3: Success count 1|    holder name =argv0 memory N/A|compute v1: Success count 1|detail list: Success count 1|accounting pids: Success count 0|accounting stats of holder: Not Found|accounting stats of self: Not Found|processes utilization: Not Found count 0|utilization samples: Not Found count 0"
    fi
    echo "$want" | tr '|' '\n' > "$tmp/want.$iso"
    while IFS= read -r l; do
        grep -qxF "$l" "$tmp/list.$iso.out" || fail "--isolation $iso: no line '$l'"
    done < "$tmp/want.$iso"
    [ $iso = thread ] && grep -q '^    self' "$tmp/list.$iso.out" && fail "--isolation thread: the lister (no device memory) was shown"
done
echo "PASS: family server: --isolation process shows the holder (its pid, argv[0], its memory) and the lister; --isolation thread the holder only, memory N/A, no per-process figures"
