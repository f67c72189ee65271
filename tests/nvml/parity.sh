#!/bin/sh
# nvml.symbols.parity: every function nvml.h declares (with and without
# NVML_NO_UNVERSIONED_FUNC_DEFS: the unversioned and the _v2/_v3 names) is
# exported by the stub, whose soname is libnvidia-ml.so.1. With a third
# argument, a list of the real library's exports (one name a line, taken on
# the GPU machine by tests/gpu/nvml.sh; CI uses tests/nvml/libnvidia-ml.exports,
# driver 580.159.04), also every name of that list: a name the stub lacks
# fails. Names beyond nvml.h are allowed when the coverage report declares
# them in the spec's own header (apigen_nvml.h: the real library's exports
# that nvml.h of 13.0 lacks, forwarded) or lists them under "Exported beyond
# the header" (the spec's extra_symbols and private_symbols).
#   parity.sh NVML_H STUB COVERAGE_MD [REAL_EXPORTS]
set -u
hdr=$1 stub=$2 cov=$3 real=${4:-}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/nvml-parity.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
grep 'DECLDIR' "$hdr" | grep -oE 'nvml[A-Za-z0-9_]+ *\(' | tr -d ' (' | sort -u > "$tmp/header"
nm -D --defined-only "$stub" | awk '{print $3}' | sed 's/@.*//' | sort -u > "$tmp/stub"
rc=0
missing=$(comm -23 "$tmp/header" "$tmp/stub")
if [ -n "$missing" ]; then
    echo "FAIL: the stub lacks $(echo "$missing" | wc -l) function(s) of $(basename "$hdr"):"
    echo "$missing" | sed 's/^/  /'
    rc=1
fi
{
    sed -n '/^Exported beyond the header/,$s/^- `\([A-Za-z0-9_]*\)`$/\1/p' "$cov"
    sed -n 's/^| `\(nvml[A-Za-z0-9_]*\)` | [a-z]* | [a-z/]*apigen_nvml\.h:.*/\1/p' "$cov"
} | sort -u > "$tmp/allowed"
sort -u "$tmp/header" "$tmp/allowed" > "$tmp/known"
extra=$(comm -13 "$tmp/known" "$tmp/stub")
[ -n "$extra" ] && { echo "FAIL: the stub exports names nvml.h does not declare:"; echo "$extra" | sed 's/^/  /'; rc=1; }
soname=$(readelf -d "$stub" | sed -n 's/.*Library soname: \[\(.*\)\].*/\1/p')
[ "$soname" = libnvidia-ml.so.1 ] || { echo "FAIL: stub soname '$soname', not libnvidia-ml.so.1"; rc=1; }
nreal=0
if [ -n "$real" ] && [ -f "$real" ]; then
    grep -v '^#' "$real" | sort -u > "$tmp/real"
    nreal=$(wc -l < "$tmp/real")
    lack=$(comm -23 "$tmp/real" "$tmp/stub")
    if [ -n "$lack" ]; then
        echo "FAIL: the real library ($(sed -n '1s/^# //p' "$real")) exports $(echo "$lack" | wc -l) name(s) the stub does not"
        echo "  (declared in no nvml.h: forward them from specs/nvml/apigen_nvml.h, or list them in api.private_symbols):"
        echo "$lack" | sed 's/^/  /'
        rc=1
    fi
elif [ -n "$real" ]; then
    echo "note: no list of the real library's exports ($real): that parity is not checked"
fi
[ $rc = 0 ] && echo "PASS: all $(wc -l < "$tmp/header") functions of $(basename "$hdr") are exported by the stub, and $(wc -l < "$tmp/allowed") extra symbol(s) of the spec, nothing else; soname $soname; every one of the real library's $nreal exports too"
exit $rc
