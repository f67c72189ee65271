#!/bin/sh
# exports.sh EXPORTS VERSION [LIB]: what NVIDIA's cuDNN of VERSION exports,
# from specs/cudnn/exports.txt (scripts/cudnn-exports.sh makes it from the
# wheels; a version number, because no header says which library exports
# which name, nor what the sub-libraries export beyond the headers).
#   VERSION  CUDNN_VERSION (90201 for 9.2.1) or 9.2.1
#   LIB      a library (libcudnn_graph.so.9): its names as specs/cudnn/sublib.sh
#            reads them (`T name`, `D|B|R name size`); without LIB: the
#            libraries of that version, one a line
# A version newer than the newest listed gets the newest's lists, with a
# warning on stderr (run scripts/cudnn-exports.sh once its wheel is out);
# one older than the oldest, or between two listed ones, is an error.
set -eu
exports=$1 v=$2 lib=${3:-}
case $v in *.*) v=$(echo "$v" | awk -F. '{printf "%d", $1 * 10000 + $2 * 100 + $3}') ;; esac
known=$(sed -n 's/^versions //p' "$exports")
newest=${known##* }
case " $known " in
*" $v "*) ;;
*)
    if [ "$v" -gt "$newest" ]; then
        echo "exports.sh: cuDNN $v is not in $exports (newest: $newest): the sub-libraries are made from $newest's lists; refresh with scripts/cudnn-exports.sh" >&2
        v=$newest
    else
        echo "exports.sh: cuDNN $v is not in $exports (listed: $known)" >&2
        exit 1
    fi
    ;;
esac
awk -v v="$v" -v lib="$lib" '
    /^#/ || /^versions / { next }
    $5 <= v && ($6 == "+" || v <= $6) {
        if (lib == "") { if (!seen[$1]++) print $1 }
        else if ($1 == lib) print ($2 == "T" ? "T " $3 : $2 " " $3 " " $4)
    }' "$exports"
