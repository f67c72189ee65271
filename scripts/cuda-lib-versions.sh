#!/bin/sh
# shellcheck disable=SC2086  # $incs, $libs, $tp_libs, $strict, CFLAGS: lists of words
# One spec of a CUDA library (or NVML), many CUDA releases: for each VERSION,
# takes the API's headers and library from NVIDIA's wheel of that release
# (scripts/cuda-lib-wheels.txt says which wheel; the runtime's headers, which
# the libraries' headers include, come from scripts/cuda-versions.sh's
# cache), regenerates specs/API.yaml against them with --strict and
# --compare (the change report against the committed generated/API, written
# to the work folder; every function the version adds or changes must be
# annotated or decided by the defaults: an undecided one fails), builds the
# guest stub against those headers only and compares its exports with the
# wheel's library (every symbol with its version, none more, and the soname),
# and builds the server (generated handlers + specs/API/*.c that are not the
# spec's api.sources) against the same headers, linked with the wheel's
# library. A wheel without a library (nvidia-nvml-dev: nvml.h only; the
# library comes with the driver) is compared with the headers instead: every
# function they declare is exported, and nothing beyond them and the spec's
# own (api.extra_symbols, private_symbols, the helper header's exports).
#
#   scripts/cuda-lib-versions.sh APIGEN GUEST_LIB TRANSPORT_LIB API VERSION...|all
#     API       cublas cublasLt cufft curand cusparse cusolver nvrtc nvjitlink nvml
#     VERSION   a CUDA release of scripts/cuda-lib-wheels.txt for API, or "all"
#
# Environment: as scripts/cuda-versions.sh (APIGEN_WHEEL_CACHE, default
# ~/.cache/apigen-cuda-wheels; APIGEN_BUILD_SERVER=0; CC; APIGEN_STUB_CFLAGS;
# KEEP=1 keeps the work folder with the report, API_changes.txt; PIP).
# Exit status: 0 every version passes, 1 a failure, 77 the registry cannot be
# reached and a wheel is not cached (SKIPPED, with the reason).
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/scripts/versions-args.sh" # apigen guest_lib tp_lib tp_libs host_lib cache pip cc
api=$4
shift 4
table=$root/scripts/cuda-lib-wheels.txt
spec=$root/specs/$api.yaml
S=$root/specs/$api
mkdir -p "$cache" || exit 1
. "$root/scripts/cuda-wheels.sh"
[ -f "$spec" ] || { echo "FAIL: no $spec"; exit 1; }

known=$(awk -v a="$api" '$2 == a {print $1}' "$table" | tr '\n' ' ')
[ -n "$known" ] || { echo "FAIL: $table names no wheel of $api"; exit 1; }
[ "$*" = all ] && set -- $known

# the guest's sources: the spec's api.sources; the server's: the spec's other C
guest_srcs=""
for f in $(sed -n 's/^  sources: \[\(.*\)\].*$/\1/p' "$spec" | tr -d ' ' | tr ',' ' '); do
    guest_srcs="$guest_srcs $root/specs/$f"
done
host_srcs=""
for f in "$S"/*.c; do
    [ -f "$f" ] || continue
    case " $guest_srcs " in *" $f "*) ;; *) host_srcs="$host_srcs $f" ;; esac
done
strict="-Werror=implicit-function-declaration -Wno-deprecated-declarations"

status=0
for v in "$@"; do
    echo "=== $api, CUDA $v"
    reqs=$(awk -v a="$api" -v v="$v" '$1 == v && $2 == a {$1 = $2 = ""; print}' "$table")
    [ -n "$reqs" ] || { echo "FAIL: no wheel of $api for CUDA $v in $table (known: $known)"; status=1; continue; }
    # each wheel into $cache/vVERSION/NAME (nvidia-cublas-cu12 -> cublas);
    # the first has the library
    d="" incs="" rc=0
    for r in $reqs; do
        sub=""
        case $r in *:*) sub=${r##*:} r=${r%:*} ;; esac
        w=$cache/v$v/$(echo "${r%%==*}" | sed 's/^nvidia-//; s/-cu[0-9]*$//')
        wheel_unpack "$r" "$w"
        rc=$?
        if [ $rc = 77 ]; then wheel_offline "$r"; break; fi
        [ $rc = 0 ] || { echo "FAIL: $v: cannot unpack $r into $w"; break; }
        [ -z "$d" ] && d=$w req=$r
        if [ -n "$sub" ]; then
            # WHEEL:DIR: a folder holding only include/DIR of the wheel
            [ -e "$w/only-$sub/$sub" ] || { mkdir -p "$w/only-$sub" && ln -sfn "$w/include/$sub" "$w/only-$sub/$sub"; }
            incs="$incs -I $w/only-$sub"
        else
            incs="$incs -I $w/include"
        fi
    done
    if [ $rc = 77 ]; then [ $status = 1 ] || status=77; continue; fi
    [ $rc = 0 ] || { status=1; continue; }
    # the CUDA runtime's headers (and libcudart, which some servers call)
    # when the library's headers include them
    rt=""
    if grep -qsE '#[[:space:]]*include[[:space:]]*[<"](cuda_runtime|cuda_runtime_api|driver_types|library_types|cuComplex|cuda)\.h' "$d"/include/*.h "$d"/include/*/*.h 2>/dev/null; then
        APIGEN_PREPARE_ONLY=1 sh "$root/scripts/cuda-versions.sh" "$apigen" "$guest_lib" "$tp_lib" "$v" >"$cache/prep-$api-$v.log" 2>&1
        rc=$?
        if [ $rc = 77 ]; then sed -n '/SKIP/,$p' "$cache/prep-$api-$v.log"; [ $status = 1 ] || status=77; continue; fi
        [ $rc = 0 ] || { cat "$cache/prep-$api-$v.log"; status=1; continue; }
        rt=$cache/v$v
        incs="$incs -I $rt/include"
    fi
    work=$(mktemp -d "${TMPDIR:-/tmp}/apigen-$api-$v.XXXXXX")
    out=$work/gen
    # 1. regenerate with the change report against the committed output;
    # "declaration changed under an annotation" (review) errors still write
    # the output, anything else (an undecided function, an annotation that
    # matches nothing: --strict) writes nothing
    "$apigen" "$spec" $incs -o "$out" --strict --compare "$root/generated/$api" \
        >"$work/apigen.out" 2>"$work/apigen.err"
    if [ ! -f "$out/${api}_stub.c" ]; then
        grep -E 'error' "$work/apigen.err" | head -n 30
        echo "FAIL: $v: apigen failed (the report: $out/${api}_changes.txt)"
        status=1
        KEEP=1
    else
        # the report's summary: what it compares, each section's size
        { sed -n '1s/^apigen: [^:]*: changes against [^ ]* /changes against generated\/'"$api"' /p' "$work/apigen.out"
          sed -n 's/^  \([a-z].*([0-9]*)\):$/  \1/p' "$work/apigen.out"; } | sed 's/^/report: /' 
        model=$out/${api}_model.txt
        soname=$(sed -n 's/^api	[^	]*	[^	]*	soname=\([^	]*\).*/\1/p' "$model")
        # 2. the stub, against this version's headers only
        if ! $cc ${APIGEN_STUB_CFLAGS:-} -std=c11 -O1 -fPIC -shared -fvisibility=hidden $strict -o "$work/$soname" \
            -I "$out" $incs -I "$S" -I "$root/runtime" "$out/${api}_stub.c" $guest_srcs \
            "$guest_lib" $tp_libs -lpthread -Wl,-soname,"$soname" \
            -Wl,--version-script="$out/$api.map" -Wl,-z,defs >"$work/cc.log" 2>&1; then
            grep -m 20 -E 'error:|undefined' "$work/cc.log"
            echo "FAIL: $v: the $api stub does not compile against CUDA $v's headers"
            status=1
            [ "${KEEP:-0}" = 1 ] && echo "kept $work" || rm -rf "$work"
            continue
        fi
        # the wheel's library of the spec's soname family (libcublas.so.*)
        real=$(ls "$d/lib/${soname%%.so*}".so* 2>/dev/null | head -n 1)
        # 3. the server over it (and libcudart of the release)
        srv="server built"
        srv_note=""
        libs=""
        if [ -n "$real" ]; then
            libs=$real
        else
            # no library in the wheel (NVML's comes with the driver): a
            # link-only one of the stub's exports, never run, stands in
            sed -n 's/^ *\([A-Za-z_][A-Za-z0-9_]*\);$/int \1(void) { return 0; }/p' "$out/$api.map" >"$work/linkonly.c"
            mkdir -p "$work/linkonly"
            $cc -shared -fPIC -w -o "$work/linkonly/$soname" -Wl,-soname,"$soname" "$work/linkonly.c" || status=1
            libs=$work/linkonly/$soname
            srv_note=" (linked with a link-only $soname of the stub's exports: the wheel has none)"
        fi
        [ -n "$rt" ] && libs="$libs $(ls "$rt"/lib/libcudart.so* | head -n 1)"
        if [ "${APIGEN_BUILD_SERVER:-1}" = 0 ]; then
            srv="server not built (APIGEN_BUILD_SERVER=0)"
        elif [ ! -f "$host_lib" ]; then
            srv="server not built (no $host_lib)"
        elif ! $cc ${APIGEN_STUB_CFLAGS:-} -std=c11 -O1 $strict -o "$work/apigen-server-$api" \
            -I "$out" $incs -I "$S" -I "$root/runtime" -I "$root/transports" \
            "$out/${api}_server.c" "$out/${api}_server_main.c" $host_srcs \
            "$host_lib" $libs $tp_libs -lpthread -ldl -lrt -lm \
            -Wl,--allow-shlib-undefined >"$work/cc-server.log" 2>&1; then
            # (the library's own dependencies, other wheels, need not be here)
            grep -m 20 -E 'error:|undefined' "$work/cc-server.log"
            echo "FAIL: $v: the $api server does not build against CUDA $v's headers and library"
            status=1
            [ "${KEEP:-0}" = 1 ] && echo "kept $work" || rm -rf "$work"
            continue
        else
            srv="$srv$srv_note"
        fi
        nm -D --defined-only "$work/$soname" | awk '{print $3}' | sort -u >"$work/stub"
        got=$(readelf -d "$work/$soname" | sed -n 's/.*Library soname: \[\(.*\)\].*/\1/p')
        cov=$(sed -n 's/^| forwarded + local + custom | \(.*\) |$/\1/p' "$out/${api}_coverage.md")
        if [ -n "$real" ]; then
            # 4a. exports equal the wheel's library: names with versions, soname
            nm -D --defined-only "$real" | awk '{print $3}' | sort -u >"$work/real"
            want=$(readelf -d "$real" | sed -n 's/.*Library soname: \[\(.*\)\].*/\1/p')
            what="all $(wc -l <"$work/real") symbols of $want (with versions), none more"
        else
            # 4b. no library in the wheel: the headers' functions (not the
            # internal ones) and the spec's symbols beyond the header
            { grep '^fn	' "$model" | grep -v '+internal' | cut -f2
              sed -n '/^Exported beyond the header/,$s/^- `\([A-Za-z0-9_]*\)`$/\1/p' "$out/${api}_coverage.md"
            } | sort -u >"$work/real"
            sed 's/@.*//' "$work/stub" | sort -u >"$work/stub.names" && mv "$work/stub.names" "$work/stub"
            want=$soname
            what="all $(wc -l <"$work/real") functions its headers declare and the spec adds, none more (no library in $req)"
        fi
        missing=$(comm -23 "$work/real" "$work/stub")
        extra=$(comm -13 "$work/real" "$work/stub")
        if [ -n "$missing" ] || [ -n "$extra" ] || [ "$got" != "$want" ]; then
            echo "FAIL: $v: stub soname $got (want $want); $(echo "$missing" | grep -c .) symbol(s) missing, $(echo "$extra" | grep -c .) exported beyond the real ones:"
            echo "$missing" | grep . | head -n 40 | sed 's/^/  missing: /'
            echo "$extra" | grep . | head -n 40 | sed 's/^/  extra: /'
            status=1
        else
            echo "PASS: $v: $api ($req): $(grep -c '^fn	' "$model") functions ($cov forwarded, local or custom); $what; soname $got; $srv"
        fi
    fi
    [ "${KEEP:-0}" = 1 ] && echo "kept $work" || rm -rf "$work"
done
exit $status
