#!/bin/sh
# bench/torch-step.sh: PyTorch training-step time natively and forwarded, in
# one run (issue 15): bench/torch_step.py's CNN and transformer block, each
# configuration ROUNDS times, rounds interleaved (native, then each
# transport) so a drift of the machine hits all alike; per configuration the
# median over rounds of each run's median step time, speed = native /
# forwarded; the guest's CPU time per step, and the server's handler time
# and calls per step (its --metrics, scraped around the timed steps).
#
#   BUILD=/tmp/bd OUT=/dir bench/torch-step.sh   (on the GPU machine, after
#   building the stubs and servers into $BUILD; tests/gpu/ scripts build so)
#
# MODES: "library" (every apigen stub preloaded, one
# apigen-server-cuda-family: a library call is one message) and/or "driver"
# (NVIDIA's runtime and libraries over apigen's libcuda); default both.
# CASES (cnn transformer), TRANSPORTS (shm unix tcp), ROUNDS (3), STEPS
# (timed steps per run, 100), WARMUP (20), PYTHON (python3). A transport may
# carry guest settings as a column of its own: "tcp@APIGEN_EAGER_US=20"
# (several: "shm@A=1,B=2"), so one run compares them on the same machine.
# A forwarded run whose last loss differs from native's is marked DIFFERS.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$root/build}
py=${PYTHON:-python3}
OUT=${OUT:-$root/torch-step-out}
modes=${MODES:-library driver}
cases=${CASES:-cnn transformer}
transports=${TRANSPORTS:-shm unix tcp}
rounds=${ROUNDS:-3}
steps=${STEPS:-100}
warmup=${WARMUP:-20}
mkdir -p "$OUT"
: > "$OUT/runs.txt"
tmp=$(mktemp -d /tmp/apigen-torch-step.XXXXXX)
spid=
cleanup() { [ -n "$spid" ] && kill "$spid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT

. "$root/bench/torch-stubs.sh"

# one run: MODE CASE CONFIG ROUND [env assignments...]; appends a line to runs.txt
run() {
    mode=$1 c=$2 cfg=$3 r=$4; shift 4
    log=$OUT/$mode.$c.$(echo "$cfg" | tr -c 'A-Za-z0-9_.\n' _).$r
    env "$@" timeout 900 "$py" "$root/bench/torch_step.py" "$c" "$steps" "$warmup" > "$log.out" 2> "$log.err"
    rc=$?
    line=$(grep '^step ' "$log.out" | tail -1)
    if [ $rc != 0 ] || [ -z "$line" ]; then
        echo "$mode $c $cfg $r FAILED rc=$rc" >> "$OUT/runs.txt"
        tail -3 "$log.err" | sed 's/^/    /' >> "$OUT/runs.txt"
    else
        echo "$mode $c $cfg $r $line" >> "$OUT/runs.txt"
    fi
}

for mode in $modes; do
    case $mode in
    library)
        server=$build/examples/cuda/apigen-server-cuda-family
        libdir=$build/stub
        preload=
        for l in $libstubs; do [ -e "$libdir/$l" ] && preload="$preload${preload:+:}$libdir/$l"; done ;;
    driver)
        # only the driver stub on the path: NVIDIA's libraries, loaded by
        # path, must not find apigen's by soname (tests/gpu/torch-cases.sh)
        server=$build/examples/cuda/apigen-server-cuda
        libdir=$build/stub-driver
        preload= ;;
    *) echo "torch-step.sh: mode '$mode' is library or driver" >&2; exit 2 ;;
    esac
    [ -x "$server" ] || { echo "torch-step.sh: no $server" >&2; exit 2; }
    port=$((20000 + $$ % 20000)) mport=$((port + 1))
    "$server" --listen "unix://$tmp/s.sock" --listen "tcp://127.0.0.1:$port" --listen "shm://apigen-ts-$$" \
        --metrics "tcp://127.0.0.1:$mport" > "$OUT/server.$mode.log" 2>&1 &
    spid=$!
    i=0; while [ ! -S "$tmp/s.sock" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
    for r in $(seq "$rounds"); do
        for c in $cases; do
            run "$mode" "$c" native "$r"
            for t in $transports; do
                case ${t%%@*} in
                unix) u=unix://$tmp/s.sock ;;
                tcp) u=tcp://127.0.0.1:$port ;;
                shm) u=shm://apigen-ts-$$ ;;
                *) echo "torch-step.sh: transport '$t' is unix, tcp or shm (@SETTINGS)" >&2; exit 2 ;;
                esac
                extra=
                case $t in *@*) extra=$(echo "${t#*@}" | tr , ' ') ;; esac
                # shellcheck disable=SC2086 # extra: VAR=VALUE words on purpose
                run "$mode" "$c" "$t" "$r" APIGEN_SERVER="$u" APIGEN_BENCH_METRICS="http://127.0.0.1:$mport/metrics" \
                    LD_PRELOAD="$preload" LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" $extra
            done
        done
    done
    kill "$spid" 2>/dev/null; wait "$spid" 2>/dev/null; spid=
    rm -f "$tmp/s.sock"
done

"$root/bench/torch_step_table.sh" "$OUT/runs.txt" "$transports" > "$OUT/table.txt"
cat "$OUT/table.txt"
echo "(median over $rounds rounds of each run's median step; speed = native / forwarded;"
echo " cpu: the Python process's CPU ms per step; srv: the server's handler ms and calls per step;"
echo " rounds: each round's own speed, its native run / its forwarded run)"
for f in "$OUT"/*.$(echo "${transports%% *}" | tr -c 'A-Za-z0-9_.\n' _).$rounds.out; do
    [ -e "$f" ] || continue
    echo "== $(basename "$f" .out): the server's functions with the most handler time per step"
    grep '^top ' "$f"
done
grep -q 'FAILED\|DIFFERS' "$OUT/runs.txt" "$OUT/table.txt" && exit 1
exit 0
