#!/bin/sh
# Refreshes specs/cudnn/exports.txt: the C names every libcudnn*.so.9 of
# NVIDIA's cuDNN 9 wheels exports, by cuDNN version. The build makes the
# sub-library stubs (libcudnn_graph.so.9, ...) of the version it is
# configured with from it (specs/cudnn/sublib.sh), and CI's cudnn.versions.*
# compare those stubs with it: a cuDNN wheel is 0.6-1 GB, so CI never
# downloads the libraries; this script does, once per release, here.
#
#   scripts/cudnn-exports.sh [KEY...|all]     (default: all)
#     KEY   a cuDNN version of scripts/cudnn-wheels.txt (9.19.0: each of its
#           wheels) or one wheel's row (cu13-9.19.0)
#
# For each wheel: downloaded with pip (--no-deps) into a temporary folder,
# its lib/libcudnn*.so.9 unpacked and listed with `nm -D --defined-only -S`
# (functions T, data D/B/R with their sizes; the mangled C++ internals some
# sub-libraries export are counted, not listed: no stub exports them), every
# name checked to be in its library's own version node; the wheel is then
# deleted and the list kept in $APIGEN_WHEEL_CACHE/cudnn-exports/. Then every
# kept list is merged into specs/cudnn/exports.txt, one line per name and
# run of consecutive versions that export it:
#   LIB KIND NAME SIZE FROM TO WHEELS  (FROM, TO: CUDNN_VERSION, 90201 =
#                                       9.2.1; TO "+": still in the newest
#                                       listed; WHEELS: * or cu12 or cu13)
# Two wheels of one cuDNN version (CUDA 12 and 13) may export different C
# names: each line says which wheels export it.
# Exit status: 0 done, 1 a failure, 77 the registry cannot be reached.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
cache=${APIGEN_WHEEL_CACHE:-$HOME/.cache/apigen-cuda-wheels}
table=$root/scripts/cudnn-wheels.txt
out=$root/specs/cudnn/exports.txt
lists=$cache/cudnn-exports
mkdir -p "$lists" || exit 1
[ $# = 0 ] && set -- all

# rows: "KEY WHEEL" for the keys asked
rows() {
    awk -v want=" $* " '!/^#/ && NF >= 3 {
        fl = $2; sub(/==.*/, "", fl); sub(/.*-/, "", fl)
        if (want == " all " || index(want, " " $1 " ") || index(want, " " fl "-" $1 " ")) print fl "-" $1, $2
    }' "$table"
}

status=0
rows "$@" >"$lists/.rows"
[ -s "$lists/.rows" ] || { echo "FAIL: no row of $table matches: $*"; exit 1; }
while read -r key req; do
    f=$lists/$key.txt
    [ -s "$f" ] && continue
    tmp=$(mktemp -d "${TMPDIR:-/tmp}/cudnn-exports.XXXXXX")
    echo "$key: downloading $req"
    if ! ${PIP:-pip} download --no-deps --quiet --disable-pip-version-check -d "$tmp" "$req" >"$tmp/pip.log" 2>&1; then
        if grep -qiE 'connection|resolve|network|unreachable|timed out' "$tmp/pip.log"; then
            echo "SKIP: $req cannot be downloaded:"; tail -n 3 "$tmp/pip.log" | sed 's/^/  /'
            [ $status = 1 ] || status=77
        else
            echo "FAIL: $req:"; tail -n 5 "$tmp/pip.log" | sed 's/^/  /'; status=1
        fi
        rm -rf "$tmp"; continue
    fi
    whl=$(ls "$tmp"/*.whl)
    (cd "$tmp" && unzip -q -o "$whl" '*/lib/libcudnn*.so.9') || { echo "FAIL: $req: no lib/libcudnn*.so.9"; status=1; rm -rf "$tmp"; continue; }
    rm -f "$whl"
    : >"$f.part"
    for so in "$tmp"/*/*/lib/libcudnn*.so.9; do
        lib=$(basename "$so")
        nm -D --defined-only -S -t d "$so" >"$tmp/nm" || { status=1; continue; }
        # a name outside the library's own version node: the stubs could
        # not reproduce it (sublib.sh puts every name in that node)
        bad=$(awk -v lib="$lib" 'NF >= 3 { n = $NF; if (n == lib || n ~ /^_Z/) next
               if (n !~ ("@@" lib "$")) print n }' "$tmp/nm" | head -n 5)
        [ -z "$bad" ] || { echo "FAIL: $key: $lib: names outside its version node: $bad"; status=1; }
        awk -v lib="$lib" '
            NF == 4 { size = $2 + 0; kind = $3; n = $4 }
            NF == 3 { size = "-"; kind = $2; n = $3 }
            NF < 3 { next }
            { sub(/@.*/, "", n); if (n == lib || n ~ /^_Z/) next
              if (kind == "T" || kind == "t" || kind == "i") { kind = "T"; size = "-" }
              else if (kind == "W") kind = "T"
              print lib, kind, n, size }' "$tmp/nm" >>"$f.part"
        echo "  $lib: $(grep -c "^$lib " "$f.part") C names, $(awk '$NF ~ /^_Z/' "$tmp/nm" | wc -l) mangled C++ names (not listed)"
    done
    sort -u "$f.part" >"$f" && rm -f "$f.part"
    rm -rf "$tmp"
done <"$lists/.rows"
rm -f "$lists/.rows"

# merge every kept list (not only those of this run) into specs/cudnn/exports.txt
ls "$lists"/cu*-9.*.txt >/dev/null 2>&1 || { echo "FAIL: no lists in $lists"; exit 1; }
for f in "$lists"/cu*-9.*.txt; do
    k=$(basename "$f" .txt); v=${k#*-}
    echo "$(echo "$v" | awk -F. '{printf "%d", $1 * 10000 + $2 * 100 + $3}') ${k%%-*} $f"
done | sort -k1,1n -k2,2 >"$lists/.index"
# a release's CUDA 12 and 13 wheels may differ (9.28.0's cu13 libcudnn_graph
# exports __nvrtcNvvmHandle, its cu12 one does not): said, and kept apart
awk '{print $1}' "$lists/.index" | uniq -d | while read -r n; do
    # shellcheck disable=SC2046  # two file names without spaces (the cache)
    set -- $(awk -v n="$n" '$1 == n {print $3}' "$lists/.index")
    cmp -s "$1" "$2" || { echo "note: cuDNN $n: the CUDA 12 and 13 wheels export different C names:"; diff "$1" "$2" | grep '^[<>]' | sed 's/^/  /'; }
done
{
    echo "# The C names each libcudnn*.so.9 of NVIDIA's cuDNN 9 wheels exports, by version:"
    echo "# LIB KIND NAME SIZE FROM TO WHEELS (FROM, TO: CUDNN_VERSION; TO + : still in the newest"
    echo "# listed; WHEELS: * every wheel listed of those versions, cu12 or cu13 the CUDA 12 or 13"
    echo "# wheels only). versions: the wheels listed. Made by scripts/cudnn-exports.sh from the"
    echo "# wheels of scripts/cudnn-wheels.txt: do not edit."
    printf 'versions'; awk '{printf " %s/%s", $1, $2}' "$lists/.index"; echo
    while read -r n fl f; do sed "s/^/$n $fl /" "$f"; done <"$lists/.index" | awk 'BEGIN { nv = 0; nk = 0 }
        { v = $1; fl = $2; key = $3 " " $4 " " $5 " " $6
          if (!(v in vi)) { vi[v] = nv; vs[nv++] = v }
          have[key, vi[v], fl] = 1; if (!(key in k)) { k[key] = 1; keys[nk++] = key } }
        END {
          # which wheels each version has lists of
          while ((getline line < idx) > 0) { split(line, a, " "); av[vi[a[1]], a[2]] = 1 }
          for (i = 0; i < nk; i++) {
            key = keys[i]; from = -1; cur = ""
            for (j = 0; j <= nv; j++) {
              val = ""
              if (j < nv) {
                n12 = ((key, j, "cu12") in have); n13 = ((key, j, "cu13") in have)
                a12 = ((j, "cu12") in av); a13 = ((j, "cu13") in av)
                if ((n12 || !a12) && (n13 || !a13) && (n12 || n13)) val = "*"
                else if (n12) val = "cu12"
                else if (n13) val = "cu13"
              }
              if (val != cur) {
                if (cur != "") print key, vs[from], (j == nv ? "+" : vs[j - 1]), cur
                cur = val; from = j
              }
            }
          }
        }' idx="$lists/.index" | sort -k1,1 -k3,3 -k5,5n
} >"$out.tmp" && mv "$out.tmp" "$out"
echo "wrote $out: $(grep -vc '^#\|^versions' "$out") lines over $(awk '/^versions/ {print NF - 1}' "$out") wheels"
rm -f "$lists/.index"
exit $status
