#!/bin/sh
# NVML tests against the fake libnvidia-ml (tests/nvml/fake_nvml.c):
#   run.sh diff TRANSPORT SERVER STUB_DIR FAKE_DIR PROGRAM [ARG...]
#       PROGRAM natively and forwarded over TRANSPORT (unix|tcp|shm): identical
#       stdout and exit status; a native exit 77 (pynvml missing) skips
#       (the fake runs no process here: run.sh procs tests the lists)
#   run.sh procs TRANSPORT SERVER STUB_DIR FAKE_DIR PROGRAM
#       PROGRAM (tests/nvml/procs.c) holds the GPU in one process and lists
#       GPU 0's processes in another, natively and forwarded: over unix and
#       tcp (--isolation process) the same lines (each session process shown
#       as its guest process, the name by argv[0]), and the server's other
#       processes (APIGEN_FAKE_NVML_OTHERS: this shell's pid, a pid of the
#       guest's own space too, and 4242) not shown, nor the holder to a guest
#       of another pid space (APIGEN_PID_SPACE); over shm (--isolation
#       thread: one process for every session, none holding device memory)
#       no process at all; and through the stub's answer to nvidia-smi's
#       private table (specs/nvml/smiprocs.c) its process-list entries
#   run.sh admin SERVER STUB_DIR FAKE_DIR PROGRAM
#       PROGRAM (tests/nvml/admin.c) forwarded to a server without and with
#       --allow-gpu-admin: the write is refused (NVML_ERROR_NO_PERMISSION, the
#       limit unchanged, one log line on the server) and then done; an
#       unsupported call (and nvmlInternalGetExportTable for an unknown table)
#       answers NVML_ERROR_NOT_SUPPORTED with one log line; nvidia-smi's table
#       is the process-list table (215 entries; those nvidia-smi does not
#       use for processes log once and refuse; APIGEN_NVML_EXPORT_TABLE=empty:
#       size word 0, =probe: 256 entries that log once and refuse); a function the server's library lacks
#       answers NVML_ERROR_FUNCTION_NOT_FOUND; nvmlDeviceGetMemoryInfo (an
#       output struct) does not carry the caller's bytes to the library
#   run.sh servers SERVER STUB_DIR PROGRAM
#       two servers (APIGEN_SERVER=url0,url1): nvmlInit reaches both, the
#       example sees 4 GPUs, server 0's first, with global indexes, and the
#       index past the last is NVML's invalid-argument error
#   run.sh wrongserver OTHER_SERVER STUB_DIR PROGRAM
#       a server of another API: nvmlInit is NVML_ERROR_DRIVER_NOT_LOADED and
#       both sides say why (the API is not served there)
#   run.sh noserver STUB_DIR PROGRAM
#       no server listening: nvmlInit is NVML_ERROR_DRIVER_NOT_LOADED, no hang
set -u
mode=$1; shift
tmp=$(mktemp -d "${TMPDIR:-/tmp}/nvml-test.XXXXXX")
spid=
cleanup() { [ -n "$spid" ] && kill "$spid" 2>/dev/null && wait "$spid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT INT TERM
fail() { echo "FAIL: $*"; for f in "$tmp"/*.log "$tmp"/*.out "$tmp"/*.err; do [ -f "$f" ] && { echo "  $f:"; sed 's/^/    /' "$f"; }; done; exit 1; }

# start SERVER TRANSPORT [flags]: sets url
start() {
    srv=$1 tp=$2; shift 2
    case "$tp" in
    unix) url="unix://$tmp/s.sock" ;;
    tcp) url="tcp://127.0.0.1:0" ;;
    shm) url="shm://apigen-nvml-$$"; set -- "$@" --isolation thread ;;
    *) echo "unknown transport $tp"; exit 2 ;;
    esac
    : > "$tmp/server.log"
    "$srv" --listen "$url" "$@" > "$tmp/server.log" 2>&1 &
    spid=$!
    i=0
    while [ $i -lt 200 ] && ! grep -q listening "$tmp/server.log"; do sleep 0.05; i=$((i + 1)); done
    [ "$tp" = tcp ] && url=$(sed -n 's/.*listening on \([a-z]*:[^ ]*\) .*/\1/p' "$tmp/server.log" | head -1)
    grep -q listening "$tmp/server.log" || fail "the server did not start"
}
stop() { kill "$spid" 2>/dev/null; wait "$spid" 2>/dev/null; spid=; }

case "$mode" in
diff)
    tp=$1 server=$2 stubdir=$3 fakedir=$4 prog=$5
    shift 5
    LD_LIBRARY_PATH=$fakedir timeout 60 "$prog" "$@" > "$tmp/native.out" 2> "$tmp/native.err"
    nrc=$?
    [ "$nrc" = 77 ] && { cat "$tmp/native.out"; exit 77; }
    start "$server" "$tp"
    APIGEN_SERVER=$url APIGEN_TIMEOUT_MS=30000 LD_LIBRARY_PATH=$stubdir timeout 60 "$prog" "$@" \
        > "$tmp/fwd.out" 2> "$tmp/fwd.err"
    frc=$?
    [ "$nrc" = 0 ] || fail "native run exited $nrc"
    if [ "$nrc" != "$frc" ] || ! cmp -s "$tmp/native.out" "$tmp/fwd.out"; then
        diff -u "$tmp/native.out" "$tmp/fwd.out" | sed 's/^/  /'
        fail "$(basename "$prog") over $tp: native exit $nrc, forwarded exit $frc"
    fi
    echo "PASS: $(basename "$prog") over $tp: identical stdout ($(wc -l < "$tmp/native.out") lines), exit $nrc"
    ;;
procs)
    tp=$1 server=$2 stubdir=$3 fakedir=$4 prog=$5
    mkdir -p "$tmp/pn" "$tmp/pf"
    # hold TAG: a holder process (its stdin a fifo this shell keeps open on
    # fd 3), hpid its pid; unhold ends it
    hold() {
        rm -f "$tmp/hold.in"; mkfifo "$tmp/hold.in"
        "$prog" hold < "$tmp/hold.in" > "$tmp/hold-$1.out" 2> "$tmp/hold-$1.err" &
        hpid=$!
        exec 3> "$tmp/hold.in"
        i=0
        while [ $i -lt 200 ] && ! grep -q '^ready$' "$tmp/hold-$1.out"; do sleep 0.05; i=$((i + 1)); done
        grep -q '^ready$' "$tmp/hold-$1.out" || fail "the $1 holder did not start"
    }
    unhold() { exec 3>&-; wait "$hpid"; }
    export APIGEN_FAKE_NVML_PROCS="$tmp/pn"
    LD_LIBRARY_PATH=$fakedir hold native
    LD_LIBRARY_PATH=$fakedir timeout 60 "$prog" list "$hpid" > "$tmp/native.out" 2> "$tmp/native.err"
    nrc=$?
    # pynvml too, where it is installed (PYNVML: the script; exit 77 without it)
    pyrc=77
    [ -n "${PYNVML:-}" ] && { LD_LIBRARY_PATH=$fakedir timeout 60 python3 "$PYNVML" "$hpid" > "$tmp/py-native.out" 2> "$tmp/py-native.err"; pyrc=$?; }
    unhold
    [ "$nrc" = 0 ] || fail "native run exited $nrc"
    grep -q '^    self name =argv0 memory ' "$tmp/native.out" && grep -q '^    holder name =argv0 memory ' "$tmp/native.out" ||
        fail "natively the fake does not list the two processes"
    grep -q '^utilization samples into 2: Insufficient Size count 6$' "$tmp/native.out" ||
        fail "natively the fake does not ask room for its whole sample buffer"
    # the server's processes that are not sessions: this shell (its pid is
    # one of the guest's too) and 4242
    export APIGEN_FAKE_NVML_PROCS="$tmp/pf" APIGEN_FAKE_NVML_OTHERS="$$,4242"
    start "$server" "$tp"
    unset APIGEN_FAKE_NVML_PROCS APIGEN_FAKE_NVML_OTHERS
    export APIGEN_SERVER=$url APIGEN_TIMEOUT_MS=30000
    LD_LIBRARY_PATH=$stubdir hold forwarded
    LD_LIBRARY_PATH=$stubdir timeout 60 "$prog" list "$hpid" > "$tmp/fwd.out" 2> "$tmp/fwd.err"
    frc=$?
    [ "$pyrc" = 0 ] && LD_LIBRARY_PATH=$stubdir timeout 60 python3 "$PYNVML" "$hpid" > "$tmp/py-fwd.out" 2> "$tmp/py-fwd.err"
    # a guest of another pid space (APIGEN_PID_SPACE) sees its own process only
    APIGEN_PID_SPACE=elsewhere LD_LIBRARY_PATH=$stubdir timeout 60 "$prog" list "$hpid" \
        > "$tmp/elsewhere.out" 2> "$tmp/elsewhere.err"
    # the process-list experiment of nvidia-smi's private table (smiprocs.c)
    LD_LIBRARY_PATH=$stubdir timeout 60 "$prog" smitable "$hpid" \
        > "$tmp/smitable.out" 2> "$tmp/smitable.err"
    unhold
    unset APIGEN_SERVER
    [ "$frc" = 0 ] || fail "forwarded run exited $frc"
    [ -n "${SHOW:-}" ] && cat "$tmp/fwd.out"
    grep -q '^    other' "$tmp/fwd.out" && fail "a process that is no session of the guest's pid space was shown"
    if [ "$tp" = shm ]; then
        # --isolation thread: one server process for every session, and
        # these hold no device memory: no process is the guest's
        for l in "compute v3: Success count 0" "detail list: Success count 0" "accounting pids: Success count 0" \
                 "processes utilization: Not Found count 0" "accounting stats of self: Not Found" \
                 "accounting stats of holder: Not Found" "own name: Success, argv[0]"; do
            grep -qF "$l" "$tmp/fwd.out" || fail "over shm (--isolation thread) no line '$l'"
        done
        echo "PASS: procs over shm (--isolation thread): no process shown (none holds device memory), names by argv[0]"
    else
        if [ "$pyrc" = 0 ] && ! cmp -s "$tmp/py-native.out" "$tmp/py-fwd.out"; then
            diff -u "$tmp/py-native.out" "$tmp/py-fwd.out" | sed 's/^/  /'
            fail "pynvml's process lists over $tp differ from native"
        fi
        [ "$pyrc" = 0 ] && { grep -q '^    holder name =argv0 memory ' "$tmp/py-fwd.out" || fail "pynvml does not see the holder"; }
        if ! cmp -s "$tmp/native.out" "$tmp/fwd.out"; then
            diff -u "$tmp/native.out" "$tmp/fwd.out" | sed 's/^/  /'
            fail "the process lists over $tp differ from native"
        fi
        grep -q '^    holder' "$tmp/elsewhere.out" && fail "a guest of another pid space saw the holder"
        grep -q '^    self name =argv0 memory ' "$tmp/elsewhere.out" || fail "a guest of another pid space does not see itself"
        grep -q '^accounting stats of holder: Not Found$' "$tmp/elsewhere.out" ||
            fail "a guest of another pid space got the holder's accounting stats"
        for l in "table entries: 215" "entry 81 (index 0): Success, is the public handle" \
                 "entry 81 (other flags): Not Supported" "entry 213: Success count 2" "    self memory 1073741824 inline name =argv0" \
                 "    holder memory 1073741824 inline name =argv0" "entry 214: Success count 0" \
                 "entry 213 into 1: Insufficient Size count 2" "entry 100: Not Supported"; do
            grep -qF "$l" "$tmp/smitable.out" || { cat "$tmp/smitable.out" "$tmp/smitable.err"; fail "nvidia-smi's process-list table: no line '$l'"; }
        done
        [ "$(grep -c 'procs: entry 100 (byte offset 800) called' "$tmp/smitable.err")" = 1 ] ||
            fail "the procs table's other entries do not log once"
        echo "PASS: procs over $tp: the guest sees itself and the holder by their own pids and names, as natively ($(grep -c '^    ' "$tmp/fwd.out") entries$([ "$pyrc" = 0 ] && echo ", pynvml too")); the server's other processes not"
    fi
    ;;
admin)
    server=$1 stubdir=$2 fakedir=$3 prog=$4
    start "$server" unix
    APIGEN_SERVER=$url LD_LIBRARY_PATH=$stubdir timeout 60 "$prog" > "$tmp/refused.out" 2> "$tmp/refused.err" ||
        fail "admin program failed without --allow-gpu-admin"
    stop
    grep -q "^set limit: 4 (Insufficient Permissions)$" "$tmp/refused.out" || fail "the write was not refused with NVML_ERROR_NO_PERMISSION"
    grep -q "^limit after: 0 700000$" "$tmp/refused.out" || fail "the refused write changed the limit"
    grep -q "^acoustic threshold after: 0 85$" "$tmp/refused.out" || fail "the refused threshold write changed it"
    [ "$(grep -c 'nvmlDeviceSetPowerManagementLimit refused: .*--allow-gpu-admin' "$tmp/server.log")" = 1 ] ||
        fail "the server did not log the refusal once"
    [ "$(grep -c '^set cpu affinity: 3 (Not Supported)$' "$tmp/refused.out")" = 2 ] || fail "the unsupported call did not answer NVML_ERROR_NOT_SUPPORTED"
    [ "$(grep -c 'nvmlDeviceSetCpuAffinity' "$tmp/refused.err")" = 1 ] || fail "the stub did not log the unsupported call once by name"
    [ "$(grep -c '^private export table: 3$' "$tmp/refused.out")" = 2 ] || fail "nvmlInternalGetExportTable is not NVML_ERROR_NOT_SUPPORTED"
    grep -q "^hostname: 13 (Function Not Found)$" "$tmp/refused.out" ||
        fail "a function the server's library lacks is not NVML_ERROR_FUNCTION_NOT_FOUND"
    [ "$(grep -c 'nvmlInternalGetExportTable: not supported: .* 01020304-0506-0708-090a-0b0c0d0e0f10 ' "$tmp/refused.err")" = 1 ] ||
        fail "the stub did not log nvmlInternalGetExportTable's table id once"
    grep -q "^nvidia-smi's table: 0, size word 1728$" "$tmp/refused.out" ||
        fail "nvidia-smi's private table (c4fe3e6c-...) is not answered with the process-list table (215 entries)"
    [ "$(grep -c 'nvmlInternalGetExportTable: answered with the process-list table: c4fe3e6c-c98f-6c4e-a327-ee696e12f7c4$' "$tmp/refused.err")" = 1 ] ||
        fail "the stub did not log nvidia-smi's table id once"
    [ "$(grep -c '^  entry [12]: 3$' "$tmp/refused.out")" = 4 ] ||
        fail "an entry of the process-list table other than 81 and 213-215 did not answer NVML_ERROR_NOT_SUPPORTED"
    grep -q "^memory info over the caller's 0xA5 bytes: 0 (Success)$" "$tmp/refused.out" ||
        fail "nvmlDeviceGetMemoryInfo sent the caller's uninitialized nvmlMemory_t to the library (it is an output)"
    mv "$tmp/server.log" "$tmp/refused-server.log"
    # the probe experiment (APIGEN_NVML_EXPORT_TABLE=probe): entries that log once and refuse
    start "$server" unix
    APIGEN_NVML_EXPORT_TABLE=probe APIGEN_SERVER=$url LD_LIBRARY_PATH=$stubdir timeout 60 "$prog" \
        > "$tmp/probe.out" 2> "$tmp/probe.err" || fail "admin program failed with the probe table"
    stop
    mv "$tmp/server.log" "$tmp/probe-server.log"
    # APIGEN_NVML_EXPORT_TABLE=empty: a table of size 0 (nvidia-smi then reads public NVML only)
    start "$server" unix
    APIGEN_NVML_EXPORT_TABLE=empty APIGEN_SERVER=$url LD_LIBRARY_PATH=$stubdir timeout 60 "$prog" \
        > "$tmp/empty.out" 2> "$tmp/empty.err" || fail "admin program failed with the empty table"
    stop
    mv "$tmp/server.log" "$tmp/empty-server.log"
    grep -q "^nvidia-smi's table: 0, size word 0$" "$tmp/empty.out" ||
        fail "APIGEN_NVML_EXPORT_TABLE=empty: nvidia-smi's table is not answered with size word 0"
    grep -q "^  entry " "$tmp/empty.out" && fail "an entry of the empty table was called"
    [ "$(grep -c 'nvmlInternalGetExportTable: answered with an empty table .*: c4fe3e6c-c98f-6c4e-a327-ee696e12f7c4$' "$tmp/empty.err")" = 1 ] ||
        fail "the stub did not log the empty table once"
    grep -q "^nvidia-smi's table: 0, size word 2056$" "$tmp/probe.out" || fail "the probe table's size word is not 257 words"
    [ "$(grep -c '^  entry [12]: 3$' "$tmp/probe.out")" = 4 ] || fail "a probe entry did not answer NVML_ERROR_NOT_SUPPORTED"
    [ "$(grep -c 'probe: entry 1 (byte offset 8) called' "$tmp/probe.err")" = 1 ] &&
        [ "$(grep -c 'probe: entry 2 (byte offset 16) called' "$tmp/probe.err")" = 1 ] ||
        fail "the probe entries were not logged once each"
    start "$server" unix --allow-gpu-admin
    APIGEN_SERVER=$url LD_LIBRARY_PATH=$stubdir timeout 60 "$prog" > "$tmp/allowed.out" 2> "$tmp/allowed.err" ||
        fail "admin program failed with --allow-gpu-admin"
    stop
    grep -q "^set limit: 0 (Success)$" "$tmp/allowed.out" || fail "the write was refused with --allow-gpu-admin"
    grep -q "^limit after: 0 500000$" "$tmp/allowed.out" || fail "the allowed write did not reach the library"
    grep -q "^acoustic threshold after: 0 83$" "$tmp/allowed.out" ||
        fail "the threshold the caller pointed to did not reach the library (nvmlDeviceSetTemperatureThreshold's temp is an input)"
    grep -q "refused" "$tmp/server.log" && fail "a refusal was logged with --allow-gpu-admin"
    # and natively the fake does it too (the gate is the server's, not the library's)
    LD_LIBRARY_PATH=$fakedir timeout 60 "$prog" > "$tmp/native.out" 2>&1 || fail "native admin run failed"
    grep -q "^limit after: 0 500000$" "$tmp/native.out" || fail "the fake library did not take the write"
    grep -q "^acoustic threshold after: 0 83$" "$tmp/native.out" || fail "the fake library did not take the threshold"
    grep -q "^hostname: absent$" "$tmp/native.out" || fail "the fake library has nvmlDeviceGetHostname_v1"
    # natively the library does get the caller's bytes: the check above can fail
    grep -q "^memory info over the caller's 0xA5 bytes: 999 " "$tmp/native.out" ||
        fail "the fake library does not notice the caller's 0xA5 bytes natively"
    grep -q "^nvidia-smi's table: 3 (none)$" "$tmp/native.out" || fail "the fake library answers nvmlInternalGetExportTable"
    echo "PASS: a privileged write is refused (NVML_ERROR_NO_PERMISSION, one server log line) without --allow-gpu-admin and done with it; an unsupported call is NVML_ERROR_NOT_SUPPORTED, logged once; a function the library lacks is NVML_ERROR_FUNCTION_NOT_FOUND; nvidia-smi's private table is an empty one, another id NVML_ERROR_NOT_SUPPORTED; an output struct's caller bytes stay in the guest"
    ;;
servers)
    server=$1 stubdir=$2 prog=$3
    APIGEN_FAKE_NVML_MACHINE=1 "$server" --listen "unix://$tmp/s1.sock" > "$tmp/server1.log" 2>&1 &
    spid1=$!
    start "$server" unix
    i=0
    while [ $i -lt 200 ] && ! grep -q listening "$tmp/server1.log"; do sleep 0.05; i=$((i + 1)); done
    APIGEN_SERVER="$url,unix://$tmp/s1.sock" LD_LIBRARY_PATH=$stubdir timeout 60 "$prog" > "$tmp/fwd.out" 2> "$tmp/fwd.err"
    rc=$?
    kill $spid1 2>/dev/null; wait $spid1 2>/dev/null
    [ $rc = 0 ] || fail "exit $rc with two servers"
    grep -q "^count: 0 4$" "$tmp/fwd.out" || fail "two servers of 2 GPUs each are not 4 GPUs"
    for g in 0 1 2 3; do grep -q "^device $g: handle ok$" "$tmp/fwd.out" || fail "no handle for GPU $g"; done
    [ "$(grep -c '^  index: 0 [0-3]$' "$tmp/fwd.out")" = 4 ] && grep -q '^  index: 0 3$' "$tmp/fwd.out" ||
        fail "the indexes are not the global ones"
    grep -q "uuid: GPU-00000000-1111-2222-3333-000000000001" "$tmp/fwd.out" || fail "server 1's GPUs are not shown"
    [ "$(sed -n 's/^  by uuid: 0 index //p' "$tmp/fwd.out" | tr '\n' ' ')" = "0 1 2 3 " ] ||
        fail "a lookup by UUID does not find each GPU on its own server"
    grep -q "^unknown uuid: 6 (Not Found)$" "$tmp/fwd.out" || fail "an unknown UUID is not NVML_ERROR_NOT_FOUND"
    grep -q "^handle past the last: 2 (Invalid Argument)$" "$tmp/fwd.out" || fail "index 4 is not NVML_ERROR_INVALID_ARGUMENT"
    echo "PASS: two servers: 4 GPUs, global indexes, init and shutdown on both"
    ;;
wrongserver)
    other=$1 stubdir=$2 prog=$3
    start "$other" unix
    APIGEN_SERVER=$url LD_LIBRARY_PATH=$stubdir timeout 60 "$prog" > "$tmp/fwd.out" 2> "$tmp/fwd.err"
    rc=$?
    stop
    [ $rc = 1 ] || fail "exit $rc (want 1: nvmlInit failed)"
    grep -q "^init: 9 " "$tmp/fwd.out" || fail "nvmlInit against another API's server is not NVML_ERROR_DRIVER_NOT_LOADED (9)"
    grep -q "API 'nvml' is not served here" "$tmp/fwd.err" || fail "the guest does not say why"
    grep -q "API 'nvml' is not served here" "$tmp/server.log" || fail "the server does not say why"
    echo "PASS: another API's server: nvmlInit = NVML_ERROR_DRIVER_NOT_LOADED, both sides name the API"
    ;;
noserver)
    stubdir=$1 prog=$2
    APIGEN_SERVER=unix://$tmp/nobody.sock APIGEN_TIMEOUT_MS=2000 LD_LIBRARY_PATH=$stubdir timeout 60 "$prog" \
        > "$tmp/fwd.out" 2> "$tmp/fwd.err"
    rc=$?
    [ $rc = 1 ] || fail "exit $rc (want 1: nvmlInit failed)"
    grep -q "^init: 9 " "$tmp/fwd.out" || fail "nvmlInit without a server is not NVML_ERROR_DRIVER_NOT_LOADED (9)"
    echo "PASS: no server: nvmlInit = NVML_ERROR_DRIVER_NOT_LOADED, exit 1, no hang"
    ;;
*) echo "usage: run.sh diff|admin|noserver ..."; exit 2 ;;
esac
exit 0
