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
#   LIB KIND NAME SIZE FROM TO     (FROM, TO: CUDNN_VERSION, 90201 = 9.2.1;
#                                   TO "+": still in the newest listed)
# Two wheels of one cuDNN version (CUDA 12 and 13) that export different C
# names: a failure (the file cannot say which).
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
    echo "$(echo "$v" | awk -F. '{printf "%d", $1 * 10000 + $2 * 100 + $3}') $k $f"
done | sort -n >"$lists/.index"
# one cuDNN version's wheels must agree
prev_v="" prev_f=""
while read -r n k f; do
    if [ "$n" = "$prev_v" ] && ! cmp -s "$f" "$prev_f"; then
        echo "FAIL: $k exports other C names than $(basename "$prev_f" .txt):"
        diff "$prev_f" "$f" | head -n 10 | sed 's/^/  /'
        status=1
    fi
    prev_v=$n prev_f=$f
done <"$lists/.index"
[ $status = 1 ] && exit 1
{
    echo "# The C names each libcudnn*.so.9 of NVIDIA's cuDNN 9 wheels exports, by version:"
    echo "# LIB KIND NAME SIZE FROM TO (CUDNN_VERSION; TO + : still in the newest listed)."
    echo "# Made by scripts/cudnn-exports.sh from the wheels of scripts/cudnn-wheels.txt: do not edit."
    printf 'versions'; awk '{print $1}' "$lists/.index" | uniq | tr '\n' ' ' | sed 's/ $//; s/^/ /'; echo
    awk '{print $1, $3}' "$lists/.index" | awk '!seen[$1]++' | while read -r n f; do
        sed "s/^/$n /" "$f"
    done | awk 'BEGIN { nv = 0; nk = 0 }
        { v = $1; key = $2 " " $3 " " $4 " " $5
          if (!(v in vi)) { vi[v] = nv; vs[nv++] = v }
          have[key, vi[v]] = 1; if (!(key in k)) { k[key] = 1; keys[nk++] = key } }
        END {
          for (i = 0; i < nk; i++) {
            key = keys[i]; from = -1
            for (j = 0; j <= nv; j++) {
              on = (j < nv) && ((key, j) in have)
              if (on && from < 0) from = j
              if (!on && from >= 0) {
                print key, vs[from], (j == nv ? "+" : vs[j - 1]); from = -1 }
            }
          }
        }' | sort -k1,1 -k3,3 -k5,5n
} >"$out.tmp" && mv "$out.tmp" "$out"
echo "wrote $out: $(grep -vc '^#\|^versions' "$out") lines over $(awk '/^versions/ {print NF - 1}' "$out") cuDNN versions"
rm -f "$lists/.index"
exit $status
