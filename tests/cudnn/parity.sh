#!/bin/sh
# cudnn.symbols.parity: for NVIDIA's libcudnn.so.9 and each sub-library
# (libcudnn_graph/ops/cnn/adv.so.9, the engine and heuristic libraries),
# apigen's stub of that name exports every C symbol the real one does, with
# its version node, and has its soname. The mangled C++ symbols the
# sub-libraries also export (cuDNN's internal logging and kernel helpers,
# which no header declares) are counted, not compared.
# The reference is REAL_DIR's libraries when present, else the lists in
# specs/cudnn/symbols/ (taken from cuDNN 9.19 with `nm -D -S`).
#   parity.sh REAL_DIR STUB_DIR SYMBOLS_DIR
set -u
real=$1 stub=$2 lists=$3
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cudnn-parity.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
rc=0
for lib in libcudnn.so.9 libcudnn_graph.so.9 libcudnn_ops.so.9 libcudnn_cnn.so.9 libcudnn_adv.so.9 \
           libcudnn_engines_precompiled.so.9 libcudnn_engines_runtime_compiled.so.9 libcudnn_heuristic.so.9; do
    if [ -f "$real/$lib" ]; then
        from="$real/$lib"
        nm -D --defined-only "$real/$lib" | awk '{print $NF}' | grep -v '^_Z' | grep -v "^$lib\$" | sort -u > "$tmp/want"
        mangled=$(nm -D --defined-only "$real/$lib" | awk '{print $NF}' | grep -c '^_Z')
    else
        from="specs/cudnn/symbols/$lib.txt"
        awk -v v="$lib" '{print $2 "@@" v}' "$lists/$lib.txt" | sort -u > "$tmp/want"
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
