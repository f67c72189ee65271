#!/bin/sh
# bench/patterns_table.sh on fixtures (tests/e2e/patterns/): the per-iteration
# counts from the trace (two runs of a loop differenced, a one-shot run as it
# is; setup, session lines and calls outside the markers ignored), the
# in-guest answers (cached, or no status), the summed microseconds of the
# guest's calls and the server's frames, the floor from the TSV and the
# speed, the target (met or MISSED); a missing value stays "-". tests/gpu/patterns.sh makes the real inputs.
#
#   patterns_table_test.sh SOURCE_DIR
set -u
src=$1
d=$src/tests/e2e/patterns
out=$(mktemp)
trap 'rm -f "$out"' EXIT
fail() { echo "FAIL: $*"; cat "$out"; exit 1; }
sh "$src/bench/patterns_table.sh" runtime "$d/runtime.tsv" "$d/runtime.trace" \
    driver "$d/driver.tsv" "$d/driver.trace" > "$out" 2>&1 || fail "patterns_table.sh exited with $?"
# pattern stub transport native forwarded speed calls inguest sync async floor beyond guest_us server_us target
row() {
    got=$(awk -v p="$1" -v s="$2" -v t="$3" '$1 == p && $2 == s && $3 == t { $1 = $2 = $3 = ""; sub(/^ +/, ""); print; exit }' "$out")
    [ "$got" = "$4" ] || fail "$1 $2 $3: got '$got', want '$4'"
}
row reduce_copy runtime unix "20.0 50.0 0.40x 4.00 1.00 2.00 1.00 20.00 10.00 37.0 19.0 MISSED"
row reduce_copy runtime shm "20.0 25.0 0.80x - - - - - - - - -"
row pin_first_44B runtime shm "10.0 100.0 0.10x 2.00 0.00 1.00 1.00 2.00 88.00 14.0 7.00 -"
row pin_first_44B runtime unix "10.0 - - - - - - - - - - -"
row params_8 driver tcp "2.00 8.00 0.25x 2.00 1.00 0.00 1.00 - - 3.00 2.00 MISSED"
row spin_5us driver tcp "5.00 5.20 0.96x 1.00 0.00 0.00 1.00 - - 3.00 2.00 met"
grep -Eq '^reduce_copy +\| +0\.80x +0\.40x \| +- *$' "$out" || fail "the speed matrix's reduce_copy row"
grep -q 'runtime/unix 10.000 us' "$out" || fail "the floors line"
# by function, per iteration: once-per-run calls (cudaGetLastError) cancel
for l in "reduce_copy runtime unix sync 1.00 cudaMemcpy" "reduce_copy runtime unix sync 1.00 cudaDeviceSynchronize" \
         "reduce_copy runtime unix async 1.00 cudaLaunchKernel" "reduce_copy runtime unix inguest 1.00 cudaGetDevice" \
         "params_8 driver tcp inguest 1.00 cuGetExportTable:entry:ctx_local" "pin_first_44B runtime shm sync 1.00 cudaStreamSynchronize"; do
    awk '{ $1 = $1; print }' "$out" | grep -qx "$l" || fail "no by-function line: $l"
done
grep -q cudaGetLastError "$out" && fail "a once-per-run call counted per iteration"
# a second run of the same loop: ignored with a word, the counts unchanged
tr2=$(mktemp)
cat "$d/runtime.trace" "$d/runtime.trace" > "$tr2"
sh "$src/bench/patterns_table.sh" runtime "$d/runtime.tsv" "$tr2" > "$out" 2>&1
rm -f "$tr2"
grep -q "a second run of reduce_copy 2 over unix ignored" "$out" || fail "a repeated run: no word"
row reduce_copy runtime unix "20.0 50.0 0.40x 4.00 1.00 2.00 1.00 20.00 10.00 37.0 19.0 MISSED"
# bad usage: a message, exit 2
sh "$src/bench/patterns_table.sh" runtime "$d/runtime.tsv" > "$out" 2>&1
[ $? = 2 ] && grep -q usage "$out" || fail "two arguments: want usage and exit 2"
sh "$src/bench/patterns_table.sh" runtime "$d/runtime.tsv" "$d/missing.trace" > "$out" 2>&1
[ $? = 2 ] && grep -q "cannot read .*missing.trace (from the run of runtime)" "$out" ||
    fail "a missing trace: want its name and exit 2"
echo "PASS: patterns table from fixtures"
