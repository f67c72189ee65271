#!/bin/sh
# Runs one exa.sh mode N times while a `yes` busies each of 2 cores, and
# counts the failures (a flaky replay shows here, not in one ctest run).
# Not a CTest test: it loads the machine on purpose.
#   stress.sh N BUILD_DIR [MODE]     (MODE: demo, reordered, ...; default demo)
# Failed runs' logs are kept in $TMPDIR/apigen-stress.*/fail.I.log.
set -u
n=${1:?usage: stress.sh N BUILD_DIR [MODE]}
build=$(cd "${2:?}" && pwd)
mode=${3:-demo}
here=$(cd "$(dirname "$0")" && pwd)
out=$(mktemp -d "${TMPDIR:-/tmp}/apigen-stress.XXXXXX")
yes > /dev/null & y1=$!
yes > /dev/null & y2=$!
trap 'kill $y1 $y2 2>/dev/null' EXIT
fail=0
i=0
while [ $i -lt "$n" ]; do
    i=$((i + 1))
    sh "$here/exa.sh" "$mode" "$build" "$build/tests/replay/libreplay_mutant_exa.so" > "$out/run.log" 2>&1 ||
        { fail=$((fail + 1)); cp "$out/run.log" "$out/fail.$i.log"; }
done
rm -f "$out/run.log"
if [ $fail = 0 ]; then
    rmdir "$out"
    echo "replay.exa.$mode under load: 0 failures of $n"
    exit 0
fi
echo "replay.exa.$mode under load: $fail failures of $n (logs: $out)"
exit 1
