#!/bin/sh
# cuda.symbols.parity: every symbol (with its version) that the toolkit's
# libcudart.so.13 exports is exported by the stub, and the stub's soname is
# libcudart.so.13. Extra symbols of the stub are listed (there should be none).
#   parity.sh REAL_LIB STUB_LIB
set -u
real=$1 stub=$2
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cudart-parity.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
nm -D --defined-only "$real" | awk '{print $3}' | sort -u > "$tmp/real"
nm -D --defined-only "$stub" | awk '{print $3}' | sort -u > "$tmp/stub"
missing=$(comm -23 "$tmp/real" "$tmp/stub")
extra=$(comm -13 "$tmp/real" "$tmp/stub")
soname=$(readelf -d "$stub" | sed -n 's/.*Library soname: \[\(.*\)\].*/\1/p')
rc=0
if [ -n "$missing" ]; then
    echo "FAIL: the stub lacks $(echo "$missing" | wc -l) symbol(s) of $real:"
    echo "$missing" | sed 's/^/  /'
    rc=1
fi
[ -n "$extra" ] && { echo "note: the stub exports more than the real library:"; echo "$extra" | sed 's/^/  /'; }
if [ "$soname" != "libcudart.so.13" ]; then
    echo "FAIL: stub soname is '$soname', not libcudart.so.13"
    rc=1
fi
[ $rc = 0 ] && echo "PASS: $(wc -l < "$tmp/real") symbols of $(basename "$real") (versions included) are exported by the stub; soname $soname"
exit $rc
