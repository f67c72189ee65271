#!/bin/sh
# tests/gpu/repeat-case.sh: one case of tests/gpu/torch-cases.sh run REPEAT
# times (default 5), natively and forwarded, each run's outputs kept under
# $OUT/run-K and every difference from native printed whole, with the
# forwarded run's apigen and error lines: for a case that differs now and
# then (cupy_basic over tcp, sessions 29 and 33), where one run's table says
# only DIFFERS.
#   CASEDIR=$PWD/tests/gpu/frameworks CASE=cupy_basic TRANSPORTS=tcp BUILD=/tmp/b \
#       OUT=/dir sh tests/gpu/repeat-case.sh
# Env as torch-cases.sh's (BUILD, CASEDIR, LIBRARIES, TIMEOUT, ...); STEPS
# default 1.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
: "${CASE:?CASE=<a case of CASEDIR>}" "${OUT:?OUT=<a folder>}"
n=${REPEAT:-5} tr=${TRANSPORTS:-tcp}
mkdir -p "$OUT"
k=1 bad=0
while [ "$k" -le "$n" ]; do
    CASES=$CASE TRANSPORTS=$tr WARM=0 STEPS=${STEPS:-1} OUT=$OUT/run-$k \
        sh "$root/tests/gpu/torch-cases.sh" > "$OUT/run-$k.log" 2>&1
    for t in $tr; do
        o=$OUT/run-$k/$CASE
        if cmp -s "$o.native.out" "$o.$t.out"; then
            echo "run $k over $t: identical"
        else
            bad=$((bad + 1))
            echo "run $k over $t: DIFFERS"
            diff "$o.native.out" "$o.$t.out" | head -40 | sed 's/^/    /'
            grep -iE "apigen|error" "$o.$t.err" | head -20 | sed 's/^/    /'
        fi
    done
    k=$((k + 1))
done
echo "$CASE: $bad of $n runs differed over some transport ($tr)"
[ "$bad" = 0 ]
