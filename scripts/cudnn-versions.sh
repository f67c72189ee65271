#!/bin/sh
# shellcheck disable=SC2086  # $incs, $tp_libs, $strict, CFLAGS: lists of words
# One specs/cudnn.yaml, every cuDNN 9 release: for each KEY (a row of
# scripts/cudnn-wheels.txt), without downloading the wheel (0.6-1 GB):
#  1. its include/ and lib/libcudnn.so.9 (the loader, ~0.1 MB) are read out
#     of the wheel on PyPI by HTTP range requests (scripts/wheel-members.py,
#     ~1 MB; checked against the wheel's RECORD; cached), with the CUDA
#     runtime's headers of the row (scripts/cuda-versions.sh's cache);
#  2. specs/cudnn.yaml is regenerated against them with --strict and
#     --compare (the change report against the committed generated/cudnn:
#     every function the release adds must be annotated or decided by the
#     defaults);
#  3. the libcudnn.so.9 stub is built against those headers only and its
#     exports compared with the wheel's libcudnn.so.9 (names with versions,
#     none more, soname);
#  4. the sub-library stubs (libcudnn_graph.so.9, ...: every libcudnn*.so.9
#     of the wheel) are made as the build makes them (specs/cudnn/sublib.sh
#     over specs/cudnn/exports.txt's names of this version) and their
#     exports compared with exports.txt: the real sub-libraries are not
#     downloaded here; scripts/cudnn-exports.sh, which does download them,
#     wrote that file (and KEY's row of it for libcudnn.so.9 is compared
#     with the real loader read in 1);
#  5. the server (generated handlers + specs/cudnn/host.c) is built against
#     the same headers, linked with the wheel's libcudnn.so.9 and libcudart.
#
#   scripts/cudnn-versions.sh APIGEN GUEST_LIB TRANSPORT_LIB KEY...|all
#     KEY   a cuDNN version (9.19.0: each of its wheels) or one wheel
#           (cu13-9.19.0), as in scripts/cudnn-wheels.txt
#
# Environment: APIGEN_WHEEL_CACHE (default ~/.cache/apigen-cuda-wheels),
# APIGEN_BUILD_SERVER=0, CC, APIGEN_STUB_CFLAGS, KEEP=1 (keep the work
# folder), PYTHON (default python3), PIP_INDEX_URL.
# Exit status: 0 every wheel passes, 1 a failure, 77 the package index
# cannot be reached and a wheel's files are not cached (SKIPPED, with the
# reason).
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/scripts/versions-args.sh" # apigen guest_lib tp_lib tp_libs host_lib cache cc
shift 3
py=${PYTHON:-python3}
table=$root/scripts/cudnn-wheels.txt
exports=$root/specs/cudnn/exports.txt
S=$root/specs/cudnn
strict="-Werror=implicit-function-declaration -Wno-deprecated-declarations"
mkdir -p "$cache/cudnn" "$cache/.locks" || exit 1
[ $# = 0 ] && set -- all

rows=$(awk -v want=" $* " '!/^#/ && NF >= 3 {
    fl = $2; sub(/==.*/, "", fl); sub(/.*-/, "", fl)
    if (want == " all " || index(want, " " $1 " ") || index(want, " " fl "-" $1 " ")) print fl "-" $1 "|" $2 "|" $3
}' "$table")
[ -n "$rows" ] || { echo "FAIL: no row of $table matches: $*"; exit 1; }

# fetch KEY REQ -> $cache/cudnn/KEY/{include,lib}; 77 offline
fetch() {
    d=$cache/cudnn/$1
    [ -f "$d/.ready" ] && return 0
    (
        if command -v flock >/dev/null 2>&1; then flock 9 || exit 1; fi
        [ -f "$d/.ready" ] && exit 0
        rm -rf "$d" && mkdir -p "$d/x" || exit 1
        "$py" "$root/scripts/wheel-members.py" "$2" "$d/x" '*/include/*.h' '*/lib/libcudnn.so.9' \
            >"$d.log" 2>&1
        rc=$?
        [ $rc = 0 ] || { rm -rf "$d"; exit $rc; }
        mkdir -p "$d/include" "$d/lib" &&
            find "$d/x" -path '*/include/*.h' -exec cp {} "$d/include/" \; &&
            find "$d/x" -name libcudnn.so.9 -exec cp {} "$d/lib/" \; &&
            rm -rf "$d/x" && touch "$d/.ready"
    ) 9>"$cache/.locks/cudnn-$1"
}

status=0
for row in $rows; do
    key=${row%%|*} rest=${row#*|}
    req=${rest%%|*} rt=${rest#*|}
    echo "=== cuDNN $key ($req), CUDA $rt runtime headers"
    fetch "$key" "$req"
    rc=$?
    if [ $rc = 77 ]; then
        echo "SKIP: cannot read $req's headers from the package index and they are not cached in $cache/cudnn:"
        tail -n 2 "$cache/cudnn/$key.log" 2>/dev/null | sed 's/^/  /'
        [ $status = 1 ] || status=77
        continue
    fi
    [ $rc = 0 ] || { echo "FAIL: $key: cannot read $req:"; tail -n 3 "$cache/cudnn/$key.log" | sed 's/^/  /'; status=1; continue; }
    d=$cache/cudnn/$key
    sed -n 's/^wheel-members: /fetched: /p' "$d.log"
    # the CUDA runtime's headers (cudnn_graph.h includes cuda_runtime_api.h)
    APIGEN_PREPARE_ONLY=1 sh "$root/scripts/cuda-versions.sh" "$apigen" "$guest_lib" "$tp_lib" "$rt" >"$cache/cudnn/prep-$key.log" 2>&1
    rc=$?
    if [ $rc = 77 ]; then sed -n '/SKIP/,$p' "$cache/cudnn/prep-$key.log"; [ $status = 1 ] || status=77; continue; fi
    [ $rc = 0 ] || { cat "$cache/cudnn/prep-$key.log"; status=1; continue; }
    incs="-I $d/include -I $cache/v$rt/include"
    work=$(mktemp -d "${TMPDIR:-/tmp}/apigen-cudnn-$key.XXXXXX")
    out=$work/gen
    fail() { echo "FAIL: $key: $*"; status=1; rowfail=1; }
    rowfail=0
    # 2. regenerate (errors: the report only)
    "$apigen" "$root/specs/cudnn.yaml" $incs -o "$out" --strict --compare "$root/generated/cudnn" \
        >"$work/apigen.out" 2>"$work/apigen.err"
    if [ ! -f "$out/cudnn_stub.c" ]; then
        grep -E 'error' "$work/apigen.err" | head -n 30
        sed 's/^/report: /' "$work/apigen.out" | head -n 40
        fail "apigen failed (the report: $out/cudnn_changes.txt)"
    else
        { sed -n '1s/^apigen: [^:]*: changes against [^ ]* /changes against generated\/cudnn /p' "$work/apigen.out"
          sed -n 's/^  \([a-z].*([0-9]*)\):$/  \1/p' "$work/apigen.out"; } | sed 's/^/report: /'
        model=$out/cudnn_model.txt
        # 3. the stub and its exports against the wheel's libcudnn.so.9
        mkdir -p "$work/stub"
        if ! $cc ${APIGEN_STUB_CFLAGS:-} -std=c11 -O1 -fPIC -shared -fvisibility=hidden $strict \
            -o "$work/stub/libcudnn.so.9" -I "$out" $incs -I "$S" -I "$root/runtime" \
            "$out/cudnn_stub.c" "$S/guest.c" "$guest_lib" $tp_libs -lpthread \
            -Wl,-soname,libcudnn.so.9 -Wl,--version-script="$out/cudnn.map" -Wl,-z,defs >"$work/cc.log" 2>&1; then
            grep -m 20 -E 'error:|undefined' "$work/cc.log"
            fail "the stub does not compile against cuDNN $key's headers"
        else
            nm -D --defined-only "$d/lib/libcudnn.so.9" | awk '{print $3}' | sort -u >"$work/real"
            nm -D --defined-only "$work/stub/libcudnn.so.9" | awk '{print $3}' | sort -u >"$work/stub.syms"
            missing=$(comm -23 "$work/real" "$work/stub.syms") extra=$(comm -13 "$work/real" "$work/stub.syms")
            if [ -n "$missing$extra" ]; then
                fail "libcudnn.so.9: $(echo "$missing" | grep -c .) symbol(s) missing, $(echo "$extra" | grep -c .) beyond the real ones:"
                echo "$missing" | grep . | head -n 30 | sed 's/^/  missing: /'
                echo "$extra" | grep . | head -n 30 | sed 's/^/  extra: /'
            fi
            cov=$(sed -n 's/^| forwarded + local + custom | \(.*\) |$/\1/p' "$out/cudnn_coverage.md")
            echo "libcudnn.so.9: $(grep -c '^fn	' "$model") functions ($cov forwarded, local or custom); the stub exports all $(wc -l <"$work/real") symbols of the wheel's libcudnn.so.9 (with versions), none more"
            # exports.txt's row of this version for the loader: the real one's
            sh "$S/exports.sh" "$exports" "$key" libcudnn.so.9 >"$work/list.main" 2>"$work/exports.err" ||
                { cat "$work/exports.err"; fail "$key is not in specs/cudnn/exports.txt: run scripts/cudnn-exports.sh $key"; }
            [ -s "$work/exports.err" ] && { cat "$work/exports.err"; fail "$key is not in specs/cudnn/exports.txt: run scripts/cudnn-exports.sh $key"; }
            awk '{print $2 "@@libcudnn.so.9"}' "$work/list.main" | sort -u >"$work/list.main.syms"
            grep -v '^libcudnn.so.9$' "$work/real" | comm -3 - "$work/list.main.syms" >"$work/list.diff"
            [ -s "$work/list.diff" ] && { fail "specs/cudnn/exports.txt's libcudnn.so.9 of $key differs from the wheel's (refresh: scripts/cudnn-exports.sh $key):"; head -n 10 "$work/list.diff" | sed 's/^/  /'; }
            # 4. the sub-library stubs of this version, as the build makes them
            subs=$(sh "$S/exports.sh" "$exports" "$key" 2>/dev/null | grep -v '^libcudnn.so.9$')
            nsub=0
            for so in $subs; do
                sh "$S/exports.sh" "$exports" "$key" "$so" >"$work/$so.txt" 2>/dev/null &&
                sh "$S/sublib.sh" "$work/$so.txt" "$out/cudnn.map" "$so" "$work/$so.c" "$work/$so.map" &&
                $cc -std=c11 -O1 -fPIC -shared -o "$work/stub/$so" "$work/$so.c" -L"$work/stub" -l:libcudnn.so.9 \
                    -Wl,-soname,"$so" -Wl,--version-script="$work/$so.map" -Wl,-z,defs >"$work/cc-$so.log" 2>&1 ||
                    { head -n 10 "$work/cc-$so.log"; fail "$so: the sub-library stub does not build"; continue; }
                awk -v so="$so" '{print $2 "@@" so}' "$work/$so.txt" | sort -u >"$work/$so.want"
                nm -D --defined-only "$work/stub/$so" | awk '{print $3}' | grep -v "^$so\$" | sort -u >"$work/$so.have"
                if ! cmp -s "$work/$so.want" "$work/$so.have"; then
                    fail "$so: the stub's exports differ from specs/cudnn/exports.txt's:"
                    comm -3 "$work/$so.want" "$work/$so.have" | head -n 10 | sed 's/^/  /'
                fi
                nsub=$((nsub + 1))
            done
            echo "sub-libraries: $nsub stubs ($(echo $subs | sed 's/\.so\.9//g; s/libcudnn_//g')), exports as specs/cudnn/exports.txt lists $key's (C names, with versions)"
        fi
        # 5. the server
        if [ "${APIGEN_BUILD_SERVER:-1}" = 0 ]; then
            srv="server not built (APIGEN_BUILD_SERVER=0)"
        elif [ ! -f "$host_lib" ]; then
            srv="server not built (no $host_lib)"
        elif ! $cc ${APIGEN_STUB_CFLAGS:-} -std=c11 -O1 $strict -o "$work/apigen-server-cudnn" \
            -I "$out" $incs -I "$S" -I "$root/runtime" -I "$root/transports" \
            "$out/cudnn_server.c" "$out/cudnn_server_main.c" "$S/host.c" \
            "$host_lib" "$d/lib/libcudnn.so.9" "$(ls "$cache/v$rt"/lib/libcudart.so* | head -n 1)" $tp_libs \
            -lpthread -ldl -lrt -lm -Wl,--allow-shlib-undefined >"$work/cc-server.log" 2>&1; then
            grep -m 20 -E 'error:|undefined' "$work/cc-server.log"
            fail "the server does not build against cuDNN $key's headers and libcudnn.so.9"
            srv="server FAILED"
        else
            srv="server built"
        fi
        [ $rowfail = 1 ] || echo "PASS: $key: $srv"
    fi
    if [ $rowfail = 1 ] || [ "${KEEP:-0}" = 1 ]; then echo "kept $work"; else rm -rf "$work"; fi
done
exit $status
