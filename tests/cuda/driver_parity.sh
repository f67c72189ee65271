#!/bin/sh
# cuda.driver.symbols.parity: the driver stub exports every symbol of each
# reference and nothing beyond their union, with no ELF symbol versions
# (NVIDIA's driver has none), and its soname is libcuda.so.1. A reference is
# a library (its dynamic symbols: the toolkit's stubs/libcuda.so, the real
# driver) or a list of names, one a line, '#' comments (tests/cuda/symbols/:
# what a toolkit or driver of the GPU machine exports that this machine's
# toolkit lacks).
#   driver_parity.sh OUR_STUB REFERENCE...
set -u
stub=$1
shift
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cuda-parity.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
names() { # FILE: its exported names, sorted
    case $1 in
    *.txt) sed 's/#.*//; s/[[:space:]]//g; /^$/d' "$1" | sort -u ;;
    *) nm -D --defined-only "$1" | awk '{print $3}' | sort -u ;;
    esac
}
names "$stub" > "$tmp/stub"
: > "$tmp/all"
rc=0
for ref in "$@"; do
    names "$ref" > "$tmp/ref"
    [ -s "$tmp/ref" ] || { echo "FAIL: no names in $ref"; rc=1; continue; }
    sort -u "$tmp/all" "$tmp/ref" -o "$tmp/all"
    missing=$(comm -23 "$tmp/ref" "$tmp/stub")
    [ -n "$missing" ] && { echo "FAIL: the stub lacks $(echo "$missing" | wc -l) symbol(s) of $ref:"; echo "$missing" | sed 's/^/  /'; rc=1; }
    [ -z "$missing" ] && echo "ok: the stub exports the $(wc -l < "$tmp/ref") symbols of $ref"
    case $ref in
    *.txt) ;;
    *) # versions: a library that defines symbol versions has a .gnu.version_d section
        readelf -SW "$ref" | grep -q '\.gnu\.version_d' && { echo "FAIL: $ref defines symbol versions (the stub has none):"; readelf -V "$ref" | sed -n '/Version definition/,/^$/p' | sed 's/^/  /'; rc=1; } ;;
    esac
done
extra=$(comm -13 "$tmp/all" "$tmp/stub")
[ -n "$extra" ] && { echo "FAIL: the stub exports $(echo "$extra" | wc -l) symbol(s) no reference does:"; echo "$extra" | sed 's/^/  /'; rc=1; }
readelf -SW "$stub" | grep -q '\.gnu\.version_d' && { echo "FAIL: $stub defines symbol versions:"; readelf -V "$stub" | sed -n '/Version definition/,/^$/p' | sed 's/^/  /'; rc=1; }
soname=$(readelf -d "$stub" | sed -n 's/.*Library soname: \[\(.*\)\].*/\1/p')
[ "$soname" = libcuda.so.1 ] || { echo "FAIL: stub soname is '$soname', not libcuda.so.1"; rc=1; }
[ $rc = 0 ] && echo "PASS: the stub's $(wc -l < "$tmp/stub") symbols are exactly those of the $# reference(s), unversioned; soname $soname"
exit $rc
