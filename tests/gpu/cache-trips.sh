#!/bin/sh
# tests/gpu/cache-trips.sh: what the answers given in the guest (spec `cache:`, `thread_state:`)
# save, on the GPU machine. Runs each PyTorch case of tests/gpu/torch/ over
# apigen's driver stub twice on one transport, with APIGEN_CACHE=0 (every
# call reaches the server: before) and without (kept answers: after), each
# against a fresh server, and counts from the guest's trace (APIGEN_TRACE):
# every driver call the program made, those answered in the guest
# ([cached, ...]: a round trip saved each) and those that reached the server,
# with the functions that reached it most. stdout must be identical in both
# runs and to the native run (exit 1 otherwise).
#
#   BUILD=/tmp/b OUT=/dir tests/gpu/cache-trips.sh   (cuda_stub and
#   apigen-server-cuda built into $BUILD, as for tests/gpu/torch-cases.sh)
# Env: CASES (default "train_cnn infer_cnn"), STEPS (default 20), TRANSPORT
# (default unix), PYTHON.
# Timings with and without kept answers, same build, on every transport:
#   APIGEN_CACHE=0 OUT=/dir/before TRANSPORTS="unix shm tcp" BUILD=/tmp/b tests/gpu/torch-cases.sh
#   OUT=/dir/after TRANSPORTS="unix shm tcp" BUILD=/tmp/b tests/gpu/torch-cases.sh
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD:-$root/build-gpu-driver}
py=${PYTHON:-python3}
OUT=${OUT:-$root/cache-trips-out}
cases=${CASES:-train_cnn infer_cnn}
steps=${STEPS:-20}
transport=${TRANSPORT:-unix}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
server=$build/examples/cuda/apigen-server-cuda
[ -x "$server" ] || { echo "cache-trips.sh: no $server"; exit 2; }
tmp=$(mktemp -d /tmp/apigen-cache-trips.XXXXXX)
port=$((20000 + $$ % 20000))
url() { case $1 in unix) echo "unix://$tmp/cuda.sock" ;; tcp) echo "tcp://127.0.0.1:$port" ;; shm) echo "shm://apigen-ct-$$" ;; esac; }
start() {
    rm -f "$tmp/cuda.sock"
    "$server" --listen "$(url "$transport")" > "$OUT/server.$1.log" 2>&1 &
    spid=$!
    i=0
    while ! grep -q listening "$OUT/server.$1.log" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
}
stop() { kill "$spid" 2>/dev/null; wait "$spid" 2>/dev/null; }
lines() { grep -c '^apigen\[[^]]*\] trace: ' "$1"; }
fail=0
: > "$OUT/table.txt"
printf '%-12s | %-6s | %-8s | %-8s | %-8s\n' case cache calls cached "not kept" >> "$OUT/table.txt"
for c in $cases; do
    ( cd "$root/tests/gpu/torch" && timeout 600 "$py" "$c.py" "$steps" ) > "$OUT/$c.native.out" 2> "$OUT/$c.native.err"
    for mode in off on; do
        start "$c.$mode"
        rm -f "$OUT/$c.$mode.trace"
        cache=1
        [ "$mode" = off ] && cache=0
        ( cd "$root/tests/gpu/torch" && APIGEN_CACHE=$cache APIGEN_TRACE="$OUT/$c.$mode.trace" \
            APIGEN_SERVER=$(url "$transport") LD_LIBRARY_PATH="$build/stub${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
            timeout 900 "$py" "$c.py" "$steps" ) > "$OUT/$c.$mode.out" 2> "$OUT/$c.$mode.err"
        stop
        cmp -s "$OUT/$c.native.out" "$OUT/$c.$mode.out" || { echo "$c ($mode): stdout differs from native"; fail=1; }
        all=$(lines "$OUT/$c.$mode.trace")
        kept=$(grep -c '\[cached, ' "$OUT/$c.$mode.trace")
        printf '%-12s | %-6s | %-8s | %-8s | %-8s\n' "$c" "$mode" "$all" "$kept" $((all - kept)) >> "$OUT/table.txt"
        # the functions that reached the server most, and those kept
        grep '^apigen\[[^]]*\] trace: ' "$OUT/$c.$mode.trace" | grep -v '\[cached, ' |
            sed 's/^apigen\[[^]]*\] trace: \([A-Za-z0-9_]*\)(.*/\1/' | sort | uniq -c | sort -rn | head -25 \
            > "$OUT/$c.$mode.top-to-server.txt"
        grep '\[cached, ' "$OUT/$c.$mode.trace" |
            sed 's/^apigen\[[^]]*\] trace: \([A-Za-z0-9_]*\)(.*/\1/' | sort | uniq -c | sort -rn \
            > "$OUT/$c.$mode.kept.txt"
    done
done
rm -rf "$tmp"
cat "$OUT/table.txt"
echo "(calls: driver calls the program made, as the guest's trace lists them; cached: answered in the"
echo " guest, a round trip saved each; not kept: sent to the server, async calls included, or answered by the stub's own code)"
for c in $cases; do
    echo "== $c: reached the server most (kept answers on)"; cat "$OUT/$c.on.top-to-server.txt"
    echo "== $c: answered in the guest"; cat "$OUT/$c.on.kept.txt"
done
exit $fail
