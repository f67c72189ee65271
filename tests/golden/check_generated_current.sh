#!/bin/sh
# generated.current: regenerates every specs/*.yaml and diffs the result
# against the committed generated/<api>/. Exit 77 (skipped) when there are
# no specs.
set -eu
apigen=$1 root=$2
cd "$root"
set -- specs/*.yaml
if [ ! -e "$1" ]; then
    echo "skipped: specs/ has no *.yaml yet"
    exit 77
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/apigen-current.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
rc=0
for spec in "$@"; do
    api=$(basename "$spec" .yaml)
    if ! "$apigen" "$spec" -o "$tmp/$api" 2>"$tmp/$api.err"; then
        if grep -q "error: header '.*' not found" "$tmp/$api.err"; then
            # an API whose headers are not installed here (a vendor toolkit):
            # its tests/<api> check it where they are (APIGEN_INCLUDE_PATH)
            echo "skipped: $spec: its headers are not installed here ($(grep -m1 'not found' "$tmp/$api.err" | sed 's/.*error: //'))"
            continue
        fi
        cat "$tmp/$api.err" >&2
        rc=1
        continue
    fi
    if [ ! -d "generated/$api" ]; then
        echo "FAIL: generated/$api is missing: run apigen $spec -o generated/$api and commit it" >&2
        rc=1
        continue
    fi
    if ! diff -ru "generated/$api" "$tmp/$api"; then
        echo "FAIL: generated/$api is stale: run apigen $spec -o generated/$api and commit it" >&2
        rc=1
    else
        echo "ok: generated/$api is current"
    fi
done
exit $rc
