#!/bin/sh
# golden.ver.versions: the fixture ver.yaml for version 1 of ver.h, then for
# version 2 (-D VER_VERSION=2000) with --compare against the first run: the
# change report (stdout) and its diagnostics are exactly expected/ver.report,
# and the exit status is 1 (a declaration changed under an annotation).
#   versions.sh APIGEN SOURCE_ROOT    (UPDATE=1: rewrite the expected report)
set -u
apigen=$1 root=$2
cd "$root" || exit 2
tmp=$(mktemp -d "${TMPDIR:-/tmp}/apigen-ver.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT INT TERM
spec=tests/golden/fixture/ver.yaml
want=tests/golden/expected/ver.report
"$apigen" "$spec" -o "$tmp/v1" || { echo "FAIL: version 1 did not generate"; exit 1; }
"$apigen" "$spec" -D VER_VERSION=2000 -o "$tmp/v2" --compare "$tmp/v1" --undecided-unsupported \
    >"$tmp/out" 2>"$tmp/err"
rc=$?
{ sed "s|$tmp/v1|PREV|g" "$tmp/out"; sed "s|$tmp/v1|PREV|g; s|$tmp/v2|OUT|g" "$tmp/err"; } >"$tmp/report"
if [ "${UPDATE:-0}" = 1 ]; then cp "$tmp/report" "$want"; echo "updated $want"; exit 0; fi
status=0
[ "$rc" = 1 ] || { echo "FAIL: exit status $rc, expected 1 (a declaration changed under an annotation)"; status=1; }
diff -u "$want" "$tmp/report" || { echo "FAIL: the change report differs from $want"; status=1; }
# both versions' outputs were written and name their version
grep -q 'define VER_API_VERSION 2000' "$tmp/v2/ver_wire.h" || { echo "FAIL: v2 wire.h lacks its version"; status=1; }
grep -q 'libver.so.1' "$tmp/v1/ver_model.txt" && grep -q 'libver.so.2' "$tmp/v2/ver_model.txt" ||
    { echo "FAIL: the soname does not follow the version"; status=1; }
# without --undecided-unsupported version 2 is an error (verFill needs an
# annotation), and --compare still prints the report and writes it to a file
"$apigen" "$spec" -D VER_VERSION=2000 -o "$tmp/v3" --compare "$tmp/v1" >"$tmp/out3" 2>"$tmp/err3"
rc=$?
[ "$rc" = 1 ] || { echo "FAIL: exit status $rc with an undecided function, expected 1"; status=1; }
grep -q '^    verFill  ver.h:24: ' "$tmp/out3" ||
    { echo "FAIL: no change report on stdout with errors"; cat "$tmp/out3" "$tmp/err3"; status=1; }
cmp -s "$tmp/out3" "$tmp/v3/ver_changes.txt" ||
    { echo "FAIL: $tmp/v3/ver_changes.txt is not the report printed"; status=1; }
[ "$(ls "$tmp/v3")" = ver_changes.txt ] || { echo "FAIL: a failed run wrote more than its report: $(ls "$tmp/v3")"; status=1; }
# --strict adds errors of its own (annotations that match nothing): the report still comes
"$apigen" "$spec" -D VER_VERSION=2000 -o "$tmp/v4" --compare "$tmp/v1" --strict >"$tmp/out4" 2>"$tmp/err4"
grep -q '^    verFill  ver.h:24: ' "$tmp/out4" && [ -f "$tmp/v4/ver_changes.txt" ] ||
    { echo "FAIL: no change report with --strict"; cat "$tmp/out4" "$tmp/err4"; status=1; }
[ $status = 0 ] && echo "PASS: ver.yaml follows ver.h from version 1 to 2; the report is as expected"
exit $status
