#!/bin/sh
# Runs apigen on one bad-spec fixture from the repository root and compares
# its diagnostics (file:line:col: error|warning|note: lines) exactly with
# NAME.expected. Exit status: non-zero expected unless NAME.rc says 0.
# A failing run must leave the output directory untouched.
# usage: run.sh APIGEN REPO_ROOT NAME
set -u
apigen=$1
root=$2
name=$3
cd "$root" || exit 2
dir=tests/badspec
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
if [ -f "$dir/$name.args" ]; then
    args=$(cat "$dir/$name.args")
else
    args="$dir/$name.yaml"
fi
want_rc=nonzero
[ -f "$dir/$name.rc" ] && want_rc=$(cat "$dir/$name.rc")
# shellcheck disable=SC2086
"$apigen" $args -o "$tmp/out" >"$tmp/stdout" 2>"$tmp/stderr"
rc=$?
grep -E '^[^ ]+:[0-9]+(:[0-9]+)?: (error|warning|note): ' "$tmp/stderr" >"$tmp/diag"
status=0
if ! diff -u "$dir/$name.expected" "$tmp/diag"; then
    echo "badspec.$name: diagnostics differ (full stderr below)"
    cat "$tmp/stderr"
    status=1
fi
if [ -f "$dir/$name.count" ]; then
    n=$(grep -c ': error: ' "$tmp/diag")
    if [ "$n" -ne "$(cat "$dir/$name.count")" ]; then
        echo "badspec.$name: $n errors reported, expected $(cat "$dir/$name.count")"
        status=1
    fi
fi
if [ "$want_rc" = 0 ] && [ "$rc" -ne 0 ]; then
    echo "badspec.$name: exit status $rc, expected 0"
    cat "$tmp/stderr"
    status=1
fi
if [ "$want_rc" != 0 ]; then
    if [ "$rc" -eq 0 ]; then
        echo "badspec.$name: exit status 0, expected non-zero"
        status=1
    fi
    if [ -d "$tmp/out" ] && [ -n "$(ls -A "$tmp/out")" ]; then
        echo "badspec.$name: a failed run wrote output files:"
        ls -A "$tmp/out"
        status=1
    fi
fi
exit $status
