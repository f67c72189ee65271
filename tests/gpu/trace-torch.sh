#!/bin/sh
# tests/gpu/trace-torch.sh: one PyTorch script traced natively (every driver
# call, its return value and the private tables, through tests/gpu/drvtrace)
# and forwarded over the driver stub (APIGEN_TRACE on the guest and the
# server), so the first call whose answer differs can be found by reading
# the two logs side by side. Used to find why a case fails only forwarded.
#
#   BUILD=build-gpu-driver OUT=/dir tests/gpu/trace-torch.sh SCRIPT.py
#   (after tests/gpu/driver.sh, which builds the stub and the server)
# Writes native.log.gz, guest.trace.gz, server.trace.gz and both runs'
# stdout/stderr to $OUT; prints both outputs. Then the forwarded run once
# more through the same tracing shim, over the stub (DRVTRACE_REAL), so
# fwd.log.gz and native.log.gz have one format: every call, its return
# value and the 16 bytes at each pointer argument after it (DRVTRACE_MEM).
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD:-$root/build-gpu-driver}
py=${PYTHON:-python3}
OUT=${OUT:-$root/trace-torch-out}
script=$1
mkdir -p "$OUT"
server=$build/examples/cuda/apigen-server-cuda
[ -x "$server" ] || { echo "trace-torch.sh: no $server (run tests/gpu/driver.sh first)"; exit 2; }
work=$(mktemp -d /tmp/apigen-trace-torch.XXXXXX)
"$root/tests/gpu/drvtrace/build.sh" "$work/shim" > "$work/shim.log" 2>&1 || { cat "$work/shim.log"; exit 1; }

# Natively, through the tracing shim: every call verbatim, the two tables
# the integrity check hashes returned as they are.
DRVTRACE_MEM=1 DRVTRACE_LOG="$OUT/native.log" DRVTRACE_N=10000000 DRVTRACE_SLOT_N=1000000 DRVTRACE_GPA_SLOT_N=1000000 \
    DRVTRACE_NOWRAP=6bd5fb6c-5bf4-e74a-8987-d93912fd9df9,d4082055-bde6-704b-8d34-ba123c66e1f2 \
    LD_LIBRARY_PATH="$work/shim${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
    timeout 300 "$py" "$script" > "$OUT/native.out" 2> "$OUT/native.err"
echo "== native through drvtrace (exit $?)"; cat "$OUT/native.out"; tail -5 "$OUT/native.err"

APIGEN_TRACE="$OUT/server.trace" "$server" --listen "unix://$work/cuda.sock" > "$OUT/server.log" 2>&1 &
spid=$!
i=0; while [ ! -S "$work/cuda.sock" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
APIGEN_TRACE="$OUT/guest.trace" APIGEN_SERVER="unix://$work/cuda.sock" \
    LD_LIBRARY_PATH="$build/stub${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
    timeout 300 "$py" "$script" > "$OUT/fwd.out" 2> "$OUT/fwd.err"
echo "== forwarded (exit $?)"; cat "$OUT/fwd.out"; tail -15 "$OUT/fwd.err"
DRVTRACE_REAL="$build/stub/libcuda.so.1" DRVTRACE_MEM=1 DRVTRACE_LOG="$OUT/fwd.log" DRVTRACE_N=10000000 \
    DRVTRACE_SLOT_N=1000000 DRVTRACE_GPA_SLOT_N=1000000 \
    DRVTRACE_NOWRAP=6bd5fb6c-5bf4-e74a-8987-d93912fd9df9,d4082055-bde6-704b-8d34-ba123c66e1f2 \
    APIGEN_SERVER="unix://$work/cuda.sock" LD_LIBRARY_PATH="$work/shim${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
    timeout 300 "$py" "$script" > "$OUT/fwd2.out" 2> "$OUT/fwd2.err"
echo "== forwarded through drvtrace (exit $?)"; cat "$OUT/fwd2.out"; tail -3 "$OUT/fwd2.err"
kill "$spid" 2>/dev/null; wait "$spid" 2>/dev/null
for f in native.log fwd.log guest.trace server.trace; do [ -f "$OUT/$f" ] && gzip -f -9 "$OUT/$f"; done
ls -la "$OUT"
rm -rf "$work"
