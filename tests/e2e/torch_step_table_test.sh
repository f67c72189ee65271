#!/bin/sh
# bench/torch_step_table.sh on a fixture (tests/e2e/torch_step/runs.txt):
# medians over rounds (odd and even counts, rounds in any order), speed =
# native / forwarded, a failed run marked FAILED, a forwarded loss that no
# native run had marked DIFFERS and nothing else, each round's own speed. bench/torch-step.sh makes
# the real input on the GPU machine.
#
#   torch_step_table_test.sh SOURCE_DIR
set -u
src=$1
out=$(mktemp)
trap 'rm -f "$out"' EXIT
fail() { echo "FAIL: $*"; cat "$out"; exit 1; }
sh "$src/bench/torch_step_table.sh" "$src/tests/e2e/torch_step/runs.txt" "shm tcp" > "$out" 2>&1 ||
    fail "torch_step_table.sh exited with $?"
row() { # MODE CASE: the rest of its row, blanks squeezed
    got=$(awk -v m="$1" -v c="$2" '$1 == m && $2 == c { $1 = $2 = ""; sub(/^ +/, ""); print; exit }' "$out" | tr -s ' ')
    [ "$got" = "$3" ] || fail "$1 $2: got '$got', want '$3'"
}
row library cnn "2.50 (2.80) | 2.60 0.96x cpu 2.90 srv 0.32/58 | 3.50 0.71x cpu 3.30 srv 0.42/58 DIFFERS"
row library transformer "6.00 (5.90) | 6.00 1.00x cpu 6.10 srv 0.60/100 | FAILED"
row driver transformer "5.00 (5.00) | 6.25 0.80x cpu 6.00 srv 2.00/400 | 7.00 0.71x cpu 6.50 srv 2.25/400"
[ "$(grep -c DIFFERS "$out")" = 1 ] || fail "DIFFERS only where a loss differs"
# each round's own speed, in round order (the fixture lists round 2 of driver tcp first)
rounds() { # MODE CASE TRANSPORT WANT
    got=$(awk -v m="$1" -v c="$2" -v t="$3" '$1 == "rounds" && $2 == m && $3 == c && $4 == t { $1 = $2 = $3 = $4 = ""; sub(/^ +/, ""); print; exit }' "$out" | tr -s ' ')
    [ "$got" = "$4" ] || fail "rounds $1 $2 $3: got '$got', want '$4'"
}
rounds library cnn tcp "0.75x 0.67x 0.71x (0.67-0.75x)"
rounds driver transformer tcp "0.83x 0.62x (0.62-0.83x)"
sh "$src/bench/torch_step_table.sh" /nonexistent "shm" > /dev/null 2>&1 && fail "a missing runs file is an error"
echo "PASS"
