#!/bin/sh
# Every hand-written C file of a spec (specs/<api>/*.c) that tests a feature
# of the headers (`#ifdef APIGEN_HAS_...`) must see <api>_features.h: one that
# does not compiles either way, silently taking the "older headers" branch
# for every version (export_tables.c once refused CONTEXT_IDENTITY on 13.0).
# Preprocesses each such file as the stub and server build it (the committed
# generated/<api>, the toolkit's headers) and checks the features header's
# guard is defined.
#   feature_guards.sh SOURCE_DIR CUDA_INCLUDE_DIR [INCLUDE_DIR...]
#   (more folders of vendor headers: nvml.h's, for specs/nvml)
set -u
root=$1
shift
incs=""
for d in "$@"; do incs="$incs -I $d"; done
cc=${CC:-cc}
status=0 n=0
for f in "$root"/specs/*/*.c; do
    grep -q 'APIGEN_HAS_' "$f" || continue
    api=$(basename "$(dirname "$f")")
    guard=$(echo "${api}_FEATURES_H" | tr '[:lower:]' '[:upper:]')
    [ -f "$root/generated/$api/${api}_features.h" ] || { echo "FAIL: $f tests features but generated/$api has no ${api}_features.h"; status=1; continue; }
    n=$((n + 1))
    # shellcheck disable=SC2086
    if ! $cc -std=c11 -E -dM -I "$root/generated/$api" -I "$root/specs/$api" -I "$root/runtime" \
        -I "$root/transports" $incs "$f" 2>/dev/null | grep -q "define $guard\b"; then
        echo "FAIL: ${f#$root/} tests APIGEN_HAS_* but does not include ${api}_features.h (directly or through the spec's headers): its #ifdefs are always false"
        status=1
    fi
done
[ $status = 0 ] && echo "PASS: $n files that test features see their features header"
exit $status
