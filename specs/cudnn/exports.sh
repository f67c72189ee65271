#!/bin/sh
# exports.sh EXPORTS WHEEL [LIB]: what NVIDIA's cuDNN wheel WHEEL exports,
# from specs/cudnn/exports.txt (scripts/cudnn-exports.sh makes it from the
# wheels; a version number, because no header says which library exports
# which name, nor what the sub-libraries export beyond the headers).
#   WHEEL    cuXX-VERSION: the CUDA major the cuDNN was built for (cu12, cu13:
#            the wheel's name) and the cuDNN version (9.2.1, or 90201)
#   LIB      a library (libcudnn_graph.so.9): its names as specs/cudnn/sublib.sh
#            reads them (`T name`, `D|B|R name size`); without LIB: the
#            libraries of that wheel, one a line
# A version newer than the newest listed for that CUDA major gets the
# newest's lists, with a warning on stderr (run scripts/cudnn-exports.sh once
# its wheel is out); a wheel older than that, not listed, is an error (its
# other CUDA major's may differ: 9.28.0's do).
set -eu
exports=$1 key=$2 lib=${3:-}
case $key in
cu[0-9]*-*) fl=${key%%-*} v=${key#*-} ;;
*) echo "exports.sh: '$key': give the wheel as cu12-VERSION or cu13-VERSION" >&2; exit 1 ;;
esac
case $v in *.*) v=$(echo "$v" | awk -F. '{printf "%d", $1 * 10000 + $2 * 100 + $3}') ;; esac
listed=$(sed -n 's/^versions //p' "$exports" | tr ' ' '\n' | sed -n "s|/$fl\$||p")
[ -n "$listed" ] || { echo "exports.sh: no $fl wheel in $exports" >&2; exit 1; }
newest=$(echo "$listed" | sort -n | tail -n 1)
if ! echo "$listed" | grep -qx "$v"; then
    if [ "$v" -gt "$newest" ]; then
        echo "exports.sh: cuDNN $v ($fl) is not in $exports (newest: $newest): its lists are used; refresh with scripts/cudnn-exports.sh $fl-VERSION" >&2
        v=$newest
    else
        echo "exports.sh: the $fl wheel of cuDNN $v is not in $exports: run scripts/cudnn-exports.sh $fl-VERSION" >&2
        exit 1
    fi
fi
awk -v v="$v" -v fl="$fl" -v lib="$lib" '
    /^#/ || /^versions / { next }
    $5 <= v && ($6 == "+" || v <= $6) && ($7 == "*" || $7 == fl) {
        if (lib == "") { if (!seen[$1]++) print $1 }
        else if ($1 == lib) print ($2 == "T" ? "T " $3 : $2 " " $3 " " $4)
    }' "$exports"
