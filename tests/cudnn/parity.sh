#!/bin/sh
# cudnn.symbols.parity: for NVIDIA's libcudnn.so.9 and each sub-library
# (libcudnn_graph/ops/cnn/adv.so.9, the engine and heuristic libraries, and
# those of later releases), apigen's stub of that name exports every C
# symbol the real one does, with its version node, and has its soname. The
# mangled C++ symbols the sub-libraries also export (cuDNN's internal
# logging and kernel helpers, which no header declares) are counted, not
# compared.
# The reference is REAL_DIR's libraries when present, else NVIDIA's lists
# of WHEEL (cu13-9.19.0) in EXPORTS (specs/cudnn/exports.txt,
# scripts/cudnn-exports.sh).
#   parity.sh REAL_DIR STUB_DIR EXPORTS WHEEL
set -u
real=$1 stub=$2 exports=$3 wheel=$4
here=$(cd "$(dirname "$0")" && pwd)
lists_of() { sh "$here/../../specs/cudnn/exports.sh" "$exports" "$wheel" "$@"; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cudnn-parity.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
libs=$(lists_of) || { echo "FAIL: no export lists of cuDNN $wheel in $exports"; exit 1; }
rc=0
for lib in $libs; do
    if [ -f "$real/$lib" ]; then
        from="$real/$lib"
        nm -D --defined-only "$real/$lib" | awk '{print $NF}' | grep -v '^_Z' | grep -v "^$lib\$" | sort -u > "$tmp/want"
        mangled=$(nm -D --defined-only "$real/$lib" | awk '{print $NF}' | grep -c '^_Z')
    else
        from="specs/cudnn/exports.txt ($wheel)"
        lists_of "$lib" 2>/dev/null | awk -v v="$lib" '{print $2 "@@" v}' | sort -u > "$tmp/want"
        mangled="?"
    fi
    if [ ! -f "$stub/$lib" ]; then
        echo "FAIL: no stub $stub/$lib"; rc=1; continue
    fi
    nm -D --defined-only "$stub/$lib" | awk '{print $NF}' | grep -v "^$lib\$" | sort -u > "$tmp/have"
    missing=$(comm -23 "$tmp/want" "$tmp/have")
    extra=$(comm -13 "$tmp/want" "$tmp/have")
    soname=$(readelf -d "$stub/$lib" | sed -n 's/.*Library soname: \[\(.*\)\].*/\1/p')
    if [ -n "$missing" ]; then
        echo "FAIL: $lib: the stub lacks $(echo "$missing" | wc -l) symbol(s) of $from:"
        echo "$missing" | sed 's/^/  /' | head -20
        rc=1
    fi
    if [ -n "$extra" ]; then
        echo "FAIL: $lib: the stub exports what $from does not:"
        echo "$extra" | sed 's/^/  /' | head -20
        rc=1
    fi
    [ "$soname" = "$lib" ] || { echo "FAIL: $lib: stub soname '$soname'"; rc=1; }
    [ -z "$missing" ] && [ -z "$extra" ] &&
        echo "PASS: $lib: $(wc -l < "$tmp/want") C symbols with versions as $from ($mangled mangled C++ internals not exported)"
done
exit $rc
