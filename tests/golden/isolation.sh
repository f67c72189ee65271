#!/bin/sh
# golden.iso.isolation: apigen reads an API's headers from the folders the
# command line and the spec name (and the compiler's built-in headers), never
# from what the machine has installed. fixture/iso/inc/iso.h includes
# iso_types.h, which only fixture/iso/inc_types holds:
#  1. -I inc only: "'iso_types.h' file not found", naming the folders searched;
#  2. iso_types.h in the C library's folder (APIGEN_LIBC_INCLUDE_PATH, as a
#     vendor header installed in /usr/include would be): an error naming it;
#  3. -I inc -I inc_types: generated.
#   isolation.sh APIGEN SOURCE_ROOT
set -u
apigen=$1 root=$2
cd "$root" || exit 2
tmp=$(mktemp -d "${TMPDIR:-/tmp}/apigen-iso.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT INT TERM
fx=tests/golden/fixture/iso
status=0
fail() { echo "FAIL: $*"; cat "$tmp/err"; status=1; }

"$apigen" $fx/iso.yaml -I $fx/inc -o "$tmp/o1" >/dev/null 2>"$tmp/err"
rc=$?
[ $rc = 1 ] || fail "1: exit status $rc with a header missing, expected 1"
grep -q "^\(\./\)\?$fx/inc/iso.h:5:10: error: 'iso_types.h' file not found (searched: $fx/inc, $fx, the compiler's built-in .*, the C library's " "$tmp/err" ||
    fail "1: no 'file not found' error naming iso_types.h and the folders searched"
[ -e "$tmp/o1" ] && fail "1: output written despite the error"

mkdir "$tmp/libc" && cp $fx/inc_types/iso_types.h "$tmp/libc/" || exit 2
APIGEN_LIBC_INCLUDE_PATH=$tmp/libc "$apigen" $fx/iso.yaml -I $fx/inc -o "$tmp/o2" >/dev/null 2>"$tmp/err"
rc=$?
[ $rc = 1 ] || fail "2: exit status $rc with the header only in the C library's folder, expected 1"
grep -q "^\(\./\)\?$fx/inc/iso.h:5:10: error: 'iso_types.h' was found only in the C library's folder" "$tmp/err" ||
    fail "2: a header taken from the C library's folder was not reported"

"$apigen" $fx/iso.yaml -I $fx/inc -I $fx/inc_types -o "$tmp/o3" >/dev/null 2>"$tmp/err" ||
    fail "3: apigen failed with both folders given"
grep -q '^fn	isoPing	' "$tmp/o3/iso_model.txt" 2>/dev/null || fail "3: isoPing is not in the model"

[ $status = 0 ] && echo "PASS: headers only from the folders named; a missing one is an error naming the folders searched"
exit $status
