#!/bin/sh
# Regenerates a golden fixture into a temporary folder and diffs it against
# the committed expected output, with the apigen version stamp normalised.
#   run_golden.sh APIGEN SOURCE_ROOT SPEC(relative to SOURCE_ROOT) EXPECTED_DIR
# UPDATE=1 rewrites EXPECTED_DIR instead of diffing.
set -eu
apigen=$1 root=$2 spec=$3 expected=$4
case $apigen in /*) ;; *) apigen=$PWD/$apigen ;; esac
tmp=$(mktemp -d "${TMPDIR:-/tmp}/apigen-golden.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
norm() { sed -e 's/apigen [0-9][0-9.]*[0-9A-Za-z.+-]*/apigen VERSION/g' "$1"; }
cd "$root"
"$apigen" "$spec" -o "$tmp/a"
# the second run reads a copy of the fixture folder at another path: clang
# names unnamed records after their header's path, and output (the handshake
# fingerprint above all) must not depend on where the headers are installed
moved="$tmp/moved/elsewhere/$(dirname "$spec")"
mkdir -p "$moved"
cp -R "$(dirname "$spec")"/. "$moved"/
"$apigen" "$moved/$(basename "$spec")" -o "$tmp/b"
for f in "$tmp/b"/*; do # the "Generated ... from SPEC" lines name the path given
    sed -e "s|$tmp/moved/elsewhere/||g" "$f" >"$f.n" && mv "$f.n" "$f"
done
if ! diff -r "$tmp/a" "$tmp/b" >/dev/null; then
    echo "FAIL: two runs of apigen on $spec differ (the second from a copy at $moved)" >&2
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
