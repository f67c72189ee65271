#!/bin/sh
# tests/gpu/yield-ab.sh: does yielding after the spin (APIGEN_YIELD_US,
# transports/spin.c) pay on this machine? tests/gpu/patterns.sh twice in one
# call, as built (the default: 2000 us on 4 or more CPUs) and with
# APIGEN_YIELD_US=0 (sleep after the spin, as before e5013b8), guest and
# servers alike; both tables, then the patterns' forwarded us per iteration
# side by side. Benchmarks print numbers; nothing is asserted.
#
#   BUILD=/tmp/bd tests/gpu/yield-ab.sh     (after a build patterns.sh can use
#                                            with NOBUILD=1; OUT as there)
# Env: BUILDS (default "runtime driver"), ROUNDS (default 3), BENCH_PATTERNS
# (default the loops a long synchronize ends: multipass, constant,
# reduce_copy, and spin_2us, params_16 as controls), TRANSPORTS.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${OUT:-${BUILD:-$root/build-patterns}/yield-ab}
mkdir -p "$out"
export BENCH_PATTERNS="${BENCH_PATTERNS:-multipass,constant,reduce_copy,spin_2us,params_16}"
for y in default 0; do
    echo "== APIGEN_YIELD_US=$y"
    if [ "$y" = default ]; then unset APIGEN_YIELD_US; else export APIGEN_YIELD_US=$y; fi
    NOBUILD=1 OUT="$out/yield-$y" BUILDS="${BUILDS:-runtime driver}" ROUNDS="${ROUNDS:-3}" \
        sh "$root/tests/gpu/patterns.sh" > "$out/yield-$y.log" 2>&1
    cat "$out/yield-$y/table.txt" 2>/dev/null || tail -n 30 "$out/yield-$y.log"
done
unset APIGEN_YIELD_US
# LABEL.tsv rows: metric, unit, native, then per transport value and speed
# (apigen-bench --tsv); the metric names are the patterns'
echo "== forwarded us per iteration, default yield | APIGEN_YIELD_US=0"
for label in ${BUILDS:-runtime driver}; do
    a=$out/yield-default/$label.tsv b=$out/yield-0/$label.tsv
    [ -f "$a" ] && [ -f "$b" ] || { echo "$label: no tsv (see $out/yield-*.log)"; continue; }
    echo "-- $label stub"
    paste "$a" "$b" | sed 's/\t/ | /g'
done
