#!/bin/sh
# One cudart spec, many CUDA versions: for each VERSION, gets that version's
# headers and libcudart.so from NVIDIA's wheels on PyPI (pip download
# --no-deps, cached), regenerates specs/cudart.yaml against them, builds the
# guest stub against those headers only, and compares its exports with the
# wheel's libcudart.so (every symbol with its version, and the soname); builds
# the server (generated handlers + specs/cudart/host*.c) against the same headers
# and links it with the wheel's libcudart.so (libapigen_host.a is looked for next
# to GUEST_LIB).
#
#   scripts/cuda-versions.sh APIGEN GUEST_LIB TRANSPORT_LIB VERSION...
#     APIGEN         the apigen binary
#     GUEST_LIB      libapigen_guest.a, TRANSPORT_LIB libapigen_transport.a
#     VERSION        11.7 ... 13.5 (`known` below: NVIDIA's wheels), or "all"
#
# Environment: APIGEN_WHEEL_CACHE (default ~/.cache/apigen-cuda-wheels),
# APIGEN_BUILD_SERVER=0 (generate and build the stub only: CI's quick matrix),
# APIGEN_PREPARE_ONLY=1 (only fetch and unpack the version's headers and library),
# CC (default cc), APIGEN_STUB_CFLAGS (e.g. -fsanitize=address when the runtime
# libraries were built with it), KEEP=1 keeps the work folder, PIP (default pip).
# Exit status: 0 every version matches, 1 a mismatch or a failure, 77 the
# package registry cannot be reached and a needed wheel is not cached (the
# test is then SKIPPED, with the reason printed; it never passes silently).
# Functions a version adds that the spec cannot decide are generated as
# unsupported (apigen --undecided-unsupported) and listed.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/scripts/versions-args.sh" # apigen guest_lib tp_lib tp_libs host_lib cache pip cc
shift 3
mkdir -p "$cache" || exit 1

# Every CUDA runtime version NVIDIA's wheels offer (11.7 is the first on PyPI)
known="11.7 11.8 12.0 12.1 12.2 12.3 12.4 12.5 12.6 12.8 12.9 13.0 13.1 13.2 13.3 13.4 13.5"

# VERSION -> "runtime-package crt-package soname": the runtime wheel holds
# cuda_runtime_api.h, cuda.h and libcudart; crt/ comes from nvcc (11, 12) or
# nvidia-cuda-crt (13)
wheels() {
    case " $known " in *" $1 "*) ;; *) return 1 ;; esac
    case $1 in
    11.*) echo "nvidia-cuda-runtime-cu11==$1.* nvidia-cuda-nvcc-cu11==$1.* libcudart.so.11.0" ;;
    12.*) echo "nvidia-cuda-runtime-cu12==$1.* nvidia-cuda-nvcc-cu12==$1.* libcudart.so.12" ;;
    13.*) echo "nvidia-cuda-runtime==$1.* nvidia-cuda-crt==$1.* libcudart.so.13" ;;
    esac
}

# fetch SPEC -> the wheel file in the cache (downloads when missing):
# scripts/cuda-wheels.sh, shared with the driver's and the libraries' scripts
. "$root/scripts/cuda-wheels.sh"
fetch() { wheel_fetch "$1"; }

# prepare VERSION -> $cache/v$VERSION/{include,lib}; returns 77 when offline.
# One run at a time per version (the driver's and the libraries' scripts
# prepare the same folders, ctest runs them side by side); the version's
# folder also holds the libraries' wheels (scripts/cuda-lib-versions.sh):
# only the runtime's own parts are replaced
prepare() {
    [ -f "$cache/v$1/.ready" ] && return 0
    mkdir -p "$cache/.locks" || return 1
    (
        if command -v flock >/dev/null 2>&1; then flock 9 || exit 1; fi
        prepare_locked "$1"
    ) 9>"$cache/.locks/runtime-v$1"
}
prepare_locked() {
    d=$cache/v$1
    [ -f "$d/.ready" ] && return 0
    set -- $(wheels "$1") || { echo "unknown CUDA version '$1' (known: $known)"; return 1; }
    rt=$(fetch "$1") && crt=$(fetch "$2") || {
        echo "SKIP: cannot download $1 / $2 from the package registry and they are not cached in $cache:"
        tail -q -n 3 "$cache/pip-$(echo "${1%%==*}" | tr - _).log" "$cache/pip-$(echo "${2%%==*}" | tr - _).log" 2>/dev/null | sed 's/^/  /'
        return 77
    }
    rm -rf "$d/x" "$d/include" "$d/lib" && mkdir -p "$d/x" "$d/include" "$d/lib" || return 1
    (cd "$d/x" && unzip -q -o "$rt" && unzip -q -o "$crt" '*/include/crt/*') || return 1
    inc=$(dirname "$(find "$d/x" -name cuda_runtime_api.h | head -n 1)")
    crtd=$(find "$d/x" -type d -path '*include/crt' | head -n 1)
    lib=$(find "$d/x" -name "$3" | head -n 1)
    [ -n "$inc" ] && [ -n "$crtd" ] && [ -n "$lib" ] || { echo "FAIL: $1: no headers, crt/ or $3 in the wheels"; return 1; }
    cp -r "$inc/." "$d/include/" && cp -r "$crtd" "$d/include/" && cp "$lib" "$d/lib/" && rm -rf "$d/x" &&
        touch "$d/.ready"
}

[ "$*" = all ] && set -- $known
status=0
for v in "$@"; do
    echo "=== CUDA $v"
    prepare "$v"
    rc=$?
    if [ $rc = 77 ]; then status=77; continue; fi
    [ $rc = 0 ] || { status=1; continue; }
    d=$cache/v$v
    # APIGEN_PREPARE_ONLY=1: the headers and library only (scripts/cuda-driver-versions.sh)
    [ "${APIGEN_PREPARE_ONLY:-0}" = 1 ] && { echo "prepared $d"; continue; }
    soname=$(wheels "$v" | cut -d' ' -f3)
    work=$(mktemp -d "${TMPDIR:-/tmp}/apigen-cuda-$v.XXXXXX")
    out=$work/gen
    # 1. regenerate: new functions the spec cannot decide become unsupported (listed)
    if ! "$apigen" "$root/specs/cudart.yaml" -I "$d/include" -o "$out" --undecided-unsupported \
        >"$work/apigen.out" 2>"$work/apigen.err"; then
        cat "$work/apigen.err"
        echo "FAIL: $v: apigen failed"
        status=1
        continue
    fi
    und=$(grep -c 'generated as unsupported' "$work/apigen.err")
    [ "$und" != 0 ] && { echo "note: $und function(s) of $v need an annotation (generated as unsupported):";
        grep 'generated as unsupported' "$work/apigen.err" | sed 's/^.*warning: /  /; s/: the defaults cannot.*//'; }
    grep -q "^api	cudart	CUDART_VERSION=" "$out/cudart_model.txt" || { echo "FAIL: no version in the model"; status=1; }
    # 2. build the stub against this version's headers only; a call those
    # headers do not declare is an error, not an implicit declaration that
    # links against a newer library (-w would hide it)
    strict="-Werror=implicit-function-declaration -Wno-deprecated-declarations"
    # shellcheck disable=SC2086
    if ! $cc ${APIGEN_STUB_CFLAGS:-} -std=c11 -O1 -fPIC -shared -fvisibility=hidden $strict -o "$work/$soname" \
        -I "$out" -I "$d/include" -I "$root/specs/cudart" -I "$root/runtime" \
        "$out/cudart_stub.c" "$root/specs/cudart/guest.c" "$root/specs/cudart/launch_check.c" "$root/specs/cudart/managed.c" "$root/specs/cudart/registered.c" "$root/specs/cudart/errors.c" "$root/specs/cudart/versions.c" "$root/specs/cudart/entry_point.c" "$root/specs/cudart/ipc_events.c" "$root/specs/cudart/shareable.c" \
        "$guest_lib" $tp_libs -lpthread -Wl,-soname,"$soname" \
        -Wl,--version-script="$out/cudart.map" -Wl,-z,defs >"$work/cc.log" 2>&1; then
        grep -m 20 -E 'error:|undefined' "$work/cc.log"
        echo "FAIL: $v: the stub does not compile against CUDA $v's headers"
        status=1
        continue
    fi
    # 2b. the server for this version: generated handlers + host.c over its libcudart
    srv="server built"
    if [ "${APIGEN_BUILD_SERVER:-1}" = 0 ]; then
        srv="server not built (APIGEN_BUILD_SERVER=0)"
    elif [ ! -f "$host_lib" ]; then
        echo "note: no $host_lib: the server for $v is not built"
        srv="server not built"
    # shellcheck disable=SC2086
    elif ! $cc ${APIGEN_STUB_CFLAGS:-} -std=c11 -O1 $strict -o "$work/apigen-server-cudart" \
        -I "$out" -I "$d/include" -I "$root/specs/cudart" -I "$root/runtime" -I "$root/transports" \
        "$out/cudart_server.c" "$out/cudart_server_main.c" "$root"/specs/cudart/host*.c \
        "$host_lib" "$d/lib/$soname" $tp_libs -lpthread -ldl -lrt >"$work/cc-server.log" 2>&1; then
        grep -m 20 -E 'error:|undefined' "$work/cc-server.log"
        echo "FAIL: $v: the server does not build against CUDA $v's headers and libcudart"
        status=1
        continue
    fi
    # 3. symbol parity with the wheel's libcudart.so (names with versions) and the soname
    nm -D --defined-only "$d/lib/$soname" | awk '{print $3}' | sort -u >"$work/real"
    nm -D --defined-only "$work/$soname" | awk '{print $3}' | sort -u >"$work/stub"
    missing=$(comm -23 "$work/real" "$work/stub")
    got=$(readelf -d "$work/$soname" | sed -n 's/.*Library soname: \[\(.*\)\].*/\1/p')
    nfn=$(grep -c '^fn	' "$out/cudart_model.txt")
    if [ -n "$missing" ] || [ "$got" != "$soname" ]; then
        echo "FAIL: $v: stub soname $got (want $soname); $(echo "$missing" | grep -c .) of $(wc -l <"$work/real") symbols of $soname missing from the stub:"
        echo "$missing" | head -n 40 | sed 's/^/  /'
        status=1
    else
        cov=$(sed -n 's/^| forwarded + local + custom | \(.*\) |$/\1/p' "$out/cudart_coverage.md")
        echo "PASS: $v: $nfn functions ($cov forwarded, local or custom); all $(wc -l <"$work/real") symbols of $soname (with versions) exported by the stub; soname $got; $srv"
    fi
    [ "${KEEP:-0}" = 1 ] && echo "kept $work" || rm -rf "$work"
done
exit $status
