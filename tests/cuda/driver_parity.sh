#!/bin/sh
# cuda.driver.symbols.parity: the driver stub exports exactly the symbols
# of the toolkit's stubs/libcuda.so, with no ELF symbol versions (NVIDIA's
# driver has none), and its soname is libcuda.so.1.
#   driver_parity.sh TOOLKIT_STUB_LIB OUR_STUB
set -u
real=$1 stub=$2
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cuda-parity.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
nm -D --defined-only "$real" | awk '{print $3}' | sort -u > "$tmp/real"
nm -D --defined-only "$stub" | awk '{print $3}' | sort -u > "$tmp/stub"
rc=0
missing=$(comm -23 "$tmp/real" "$tmp/stub")
extra=$(comm -13 "$tmp/real" "$tmp/stub")
[ -n "$missing" ] && { echo "FAIL: the stub lacks $(echo "$missing" | wc -l) symbol(s) of $real:"; echo "$missing" | sed 's/^/  /'; rc=1; }
[ -n "$extra" ] && { echo "FAIL: the stub exports symbols $real does not:"; echo "$extra" | sed 's/^/  /'; rc=1; }
# versions: a library that defines symbol versions has a .gnu.version_d section
for lib in "$real" "$stub"; do
    readelf -SW "$lib" | grep -q '\.gnu\.version_d' && { echo "FAIL: $lib defines symbol versions:"; readelf -V "$lib" | sed -n '/Version definition/,/^$/p' | sed 's/^/  /'; rc=1; }
done
soname=$(readelf -d "$stub" | sed -n 's/.*Library soname: \[\(.*\)\].*/\1/p')
[ "$soname" = libcuda.so.1 ] || { echo "FAIL: stub soname is '$soname', not libcuda.so.1"; rc=1; }
[ $rc = 0 ] && echo "PASS: the $(wc -l < "$tmp/real") symbols of $(basename "$real") are exactly the stub's, unversioned; soname $soname"
exit $rc
