#!/bin/sh
# Regenerates a golden fixture into a temporary folder and diffs it against
# the committed expected output, with the apigen version stamp normalised.
#   run_golden.sh APIGEN SOURCE_ROOT SPEC(relative to SOURCE_ROOT) EXPECTED_DIR
# UPDATE=1 rewrites EXPECTED_DIR instead of diffing.
set -eu
apigen=$1 root=$2 spec=$3 expected=$4
tmp=$(mktemp -d "${TMPDIR:-/tmp}/apigen-golden.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
norm() { sed -e 's/apigen [0-9][0-9.]*[0-9A-Za-z.+-]*/apigen VERSION/g' "$1"; }
cd "$root"
"$apigen" "$spec" -o "$tmp/a"
"$apigen" "$spec" -o "$tmp/b"
if ! diff -r "$tmp/a" "$tmp/b" >/dev/null; then
    echo "FAIL: two runs of apigen on $spec differ" >&2
    diff -ru "$tmp/a" "$tmp/b" >&2 || true
    exit 1
fi
mkdir -p "$tmp/n"
for f in "$tmp/a"/*; do norm "$f" >"$tmp/n/$(basename "$f")"; done
if [ "${UPDATE:-0}" = 1 ]; then
    mkdir -p "$expected"
    rm -f "$expected"/*
    cp "$tmp/n"/* "$expected"/
    echo "updated $expected"
    exit 0
fi
if ! diff -ru "$expected" "$tmp/n"; then
    echo "FAIL: apigen output for $spec differs from $expected (UPDATE=1 $0 ... to accept)" >&2
    exit 1
fi
echo "ok: $spec matches $expected"
