#!/bin/sh
# cublas.symbols.parity (and cusparse.*, cusolver.*): every symbol (with its
# version) that the toolkit's library (libcublas.so.13, ...) exports is
# exported by the stub, and the stub's soname is the real one's. Skipped (77)
# when the toolkit has no such library.
#   parity.sh REAL_LIB STUB_LIB
set -u
real=$1 stub=$2
if [ ! -f "$real" ]; then
    echo "SKIP: no $real here (a toolkit without this library): nothing to compare the stub with"
    exit 77
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/lib-parity.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
nm -D --defined-only "$real" | awk '{print $3}' | sort -u > "$tmp/real"
nm -D --defined-only "$stub" | awk '{print $3}' | sort -u > "$tmp/stub"
missing=$(comm -23 "$tmp/real" "$tmp/stub")
extra=$(comm -13 "$tmp/real" "$tmp/stub")
want=$(readelf -d "$real" | sed -n 's/.*Library soname: \[\(.*\)\].*/\1/p')
soname=$(readelf -d "$stub" | sed -n 's/.*Library soname: \[\(.*\)\].*/\1/p')
rc=0
if [ -n "$missing" ]; then
    echo "FAIL: the stub lacks $(echo "$missing" | wc -l) symbol(s) of $real:"
    echo "$missing" | sed 's/^/  /'
    rc=1
fi
[ -n "$extra" ] && { echo "note: the stub exports more than the real library:"; echo "$extra" | sed 's/^/  /'; }
if [ "$soname" != "$want" ]; then
    echo "FAIL: stub soname is '$soname', not $want"
    rc=1
fi
[ $rc = 0 ] && echo "PASS: $(wc -l < "$tmp/real") symbols of $(basename "$real") (versions included) are exported by the stub; soname $soname"
exit $rc
