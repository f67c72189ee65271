#!/bin/sh
# The driver API spec (specs/cuda.yaml, cuda.h + cudaProfiler.h) for many CUDA
# versions: for each VERSION, takes that version's headers from NVIDIA's
# wheels (scripts/cuda-versions.sh fetches cuda.h with the runtime; the
# nvidia-cuda-profiler-api wheel has cudaProfiler.h), regenerates
# specs/cuda.yaml against them (functions the spec cannot decide are listed), and
# builds the guest stub (libcuda.so.1) against those headers only. NVIDIA
# ships no libcuda in the wheels, so the stub's exports are compared with the
# functions the version's cuda.h declares (every one must be exported), and
# the server is linked with LIBCUDA when given (a driver stub of the
# machine: a newer driver keeps every older entry point).
#
#   scripts/cuda-driver-versions.sh APIGEN GUEST_LIB TRANSPORT_LIB VERSION...|all
#
# Environment: as scripts/cuda-versions.sh; LIBCUDA (default
# /usr/local/cuda/lib64/stubs/libcuda.so when it exists) for the server.
# Exit status: 0 all pass, 1 a failure, 77 offline and a wheel not cached.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/scripts/versions-args.sh" # apigen guest_lib tp_lib tp_libs host_lib cache pip cc
shift 3
. "$root/scripts/cuda-wheels.sh"
libcuda=${LIBCUDA:-}
[ -z "$libcuda" ] && [ -f /usr/local/cuda/lib64/stubs/libcuda.so ] && libcuda=/usr/local/cuda/lib64/stubs/libcuda.so
# 11.7 on, as the runtime matrix (scripts/cuda-versions.sh): what 11.x lacks
# is in docs/upgrading.md ("The driver API on CUDA 11.x")
known="11.7 11.8 12.0 12.1 12.2 12.3 12.4 12.5 12.6 12.8 12.9 13.0 13.1 13.2 13.3 13.4 13.5"
[ "$*" = all ] && set -- $known
S=$root/specs/cuda
# the guest's sources: the spec's api.sources (cuda/guest.c, ...); the
# server's: examples/cuda/CMakeLists.txt's HOST_SOURCES
guest_srcs=$(sed -n 's/^  sources: \[\(.*\)\]$/\1/p' "$root/specs/cuda.yaml" | tr -d ' ' | tr ',' ' ' | sed 's|cuda/||g')
host_srcs="host.c host_fn.c host_copy.c host_capture.c host_arena.c host_shareable.c host_private.c host_spans.c"

# NVIDIA published no cudaProfiler.h wheel for 11.7 (the cu11 wheels start
# at 11.8): 11.7 takes 11.8's, whose declarations (cuProfilerInitialize,
# Start, Stop, CUoutput_mode) are those of every 11.x toolkit
profiler_wheel() {
    case $1 in
    11.7) echo "nvidia-cuda-profiler-api-cu11==11.8.*" ;;
    11.*) echo "nvidia-cuda-profiler-api-cu11==$1.*" ;;
    12.*) echo "nvidia-cuda-profiler-api-cu12==$1.*" ;;
    13.*) echo "nvidia-cuda-profiler-api==$1.*" ;;
    esac
}

status=0
for v in "$@"; do
    echo "=== CUDA $v (driver API)"
    case " $known " in *" $v "*) ;; *) echo "FAIL: unknown version $v (known: $known)"; status=1; continue ;; esac
    APIGEN_PREPARE_ONLY=1 sh "$root/scripts/cuda-versions.sh" "$apigen" "$guest_lib" "$tp_lib" "$v" >"$cache/prep-$v.log" 2>&1
    rc=$?
    if [ $rc = 77 ]; then sed -n '/SKIP/,$p' "$cache/prep-$v.log"; status=77; continue; fi
    [ $rc = 0 ] || { cat "$cache/prep-$v.log"; status=1; continue; }
    d=$cache/v$v
    if [ ! -f "$d/include/cudaProfiler.h" ]; then
        spec=$(profiler_wheel "$v")
        f=$(wheel_fetch "$spec") || { wheel_offline "$spec"; status=77; continue; }
        x=$(mktemp -d) && (cd "$x" && unzip -q -o "$f") &&
            cp "$(find "$x" -name cudaProfiler.h | head -n 1)" "$d/include/" && rm -rf "$x" ||
            { echo "FAIL: $v: no cudaProfiler.h in $f"; status=1; continue; }
    fi
    work=$(mktemp -d "${TMPDIR:-/tmp}/apigen-cuda-driver-$v.XXXXXX")
    out=$work/gen
    if ! "$apigen" "$root/specs/cuda.yaml" -I "$d/include" -o "$out" --undecided-unsupported \
        >"$work/apigen.out" 2>"$work/apigen.err"; then
        grep -E 'error' "$work/apigen.err" | head -n 20
        echo "FAIL: $v: apigen failed"
        status=1
        continue
    fi
    und=$(grep -c 'generated as unsupported' "$work/apigen.err")
    [ "$und" != 0 ] && { echo "note: $und function(s) of $v need an annotation (generated as unsupported):";
        grep 'generated as unsupported' "$work/apigen.err" | sed 's/^.*warning: /  /; s/: the defaults cannot.*//'; }
    srcs=""
    for f in $guest_srcs; do srcs="$srcs $S/$f"; done
    # a call the version's headers do not declare is an error, not an
    # implicit declaration that links against a newer library (-w would hide it)
    strict="-Werror=implicit-function-declaration -Wno-deprecated-declarations"
    # shellcheck disable=SC2086
    if ! $cc ${APIGEN_STUB_CFLAGS:-} -std=c11 -O1 -fPIC -shared -fvisibility=hidden $strict -o "$work/libcuda.so.1" \
        -I "$out" -I "$d/include" -I "$S" -I "$root/runtime" "$out/cuda_stub.c" $srcs \
        "$guest_lib" $tp_libs -lpthread -Wl,-soname,libcuda.so.1 \
        -Wl,--version-script="$out/cuda.map" -Wl,-z,defs >"$work/cc.log" 2>&1; then
        grep -m 20 -E 'error:|undefined' "$work/cc.log"
        echo "FAIL: $v: the driver stub does not compile against CUDA $v's headers"
        status=1
        continue
    fi
    srv="server not built (no LIBCUDA)"
    if [ "${APIGEN_BUILD_SERVER:-1}" = 0 ]; then
        srv="server not built (APIGEN_BUILD_SERVER=0)"
    elif [ -n "$libcuda" ] && [ -f "$host_lib" ]; then
        hs=""
        for f in $host_srcs; do hs="$hs $S/$f"; done
        # shellcheck disable=SC2086
        if ! $cc ${APIGEN_STUB_CFLAGS:-} -std=c11 -O1 $strict -o "$work/apigen-server-cuda" \
            -I "$out" -I "$d/include" -I "$S" -I "$root/runtime" -I "$root/transports" \
            "$out/cuda_server.c" "$out/cuda_server_main.c" $hs \
            "$host_lib" "$libcuda" $tp_libs -lpthread -ldl -lrt >"$work/cc-server.log" 2>&1; then
            if grep -v 'collect2' "$work/cc-server.log" | grep -q 'error:'; then
                grep -m 20 -E 'error:|undefined' "$work/cc-server.log"
                echo "FAIL: $v: the driver server does not build against CUDA $v's headers"
                status=1
                continue
            fi
            # compiled; only the link lacks entry points LIBCUDA's (older) driver has not
            nu=$(grep -o "undefined reference to \`[^']*'" "$work/cc-server.log" | sort -u | wc -l)
            srv="server compiled, not linked: $libcuda lacks $nu entry point(s) of CUDA $v (a driver of $v or newer has them)"
        else
            srv="server built (linked with $libcuda)"
        fi
    fi
    # every function the model takes from cuda.h and cudaProfiler.h is exported
    # (the spec's helper header apigen_cuda.h declares internal calls, not exports)
    grep '^fn	' "$out/cuda_model.txt" | awk -F'\t' '$5 !~ /^apigen_/ {print $2}' | sort -u >"$work/declared"
    nm -D --defined-only "$work/libcuda.so.1" | awk '{print $3}' | sed 's/@.*//' | sort -u >"$work/stub"
    missing=$(comm -23 "$work/declared" "$work/stub")
    if [ -n "$missing" ]; then
        echo "FAIL: $v: $(echo "$missing" | grep -c .) declared function(s) not exported:"
        echo "$missing" | head -n 20 | sed 's/^/  /'
        status=1
    else
        cov=$(sed -n 's/^| forwarded + local + custom | \(.*\) |$/\1/p' "$out/cuda_coverage.md")
        echo "PASS: $v: $(wc -l <"$work/declared") functions, all exported ($cov forwarded, local or custom); $srv"
    fi
    [ "${KEEP:-0}" = 1 ] && echo "kept $work" || rm -rf "$work"
done
exit $status
