#!/bin/sh
# generated.current.<api>: regenerates specs/<api>.yaml (or, with no SPEC,
# every specs/*.yaml) and diffs the result against the committed
# generated/<api>/. Exit 77 (skipped) when there is no spec, or when every
# spec it was given has headers that are not installed here.
#   check_generated_current.sh APIGEN ROOT [SPEC...]
set -eu
apigen=$1 root=$2
shift 2
cd "$root"
[ $# -gt 0 ] || set -- specs/*.yaml
if [ ! -e "$1" ]; then
    echo "skipped: specs/ has no *.yaml yet"
    exit 77
fi
checked=0
tmp=$(mktemp -d "${TMPDIR:-/tmp}/apigen-current.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
rc=0
for spec in "$@"; do
    api=$(basename "$spec" .yaml)
    checked=$((checked + 1))
    if ! "$apigen" "$spec" -o "$tmp/$api" 2>"$tmp/$api.err"; then
        if grep -q "error: header '.*' not found" "$tmp/$api.err"; then
            # an API whose headers are not installed here (a vendor toolkit):
            # its tests/<api> check it where they are (APIGEN_INCLUDE_PATH)
            checked=$((checked - 1))
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
[ $rc = 0 ] && [ $checked = 0 ] && exit 77 # nothing was compared: a skip, never a pass
exit $rc
