#!/bin/sh
# bench/plot.sh DATA OUT [TITLE]: draws what `apigen-bench --sweep DATA` wrote
# (copy bandwidth against transfer size) with gnuplot: one panel per series
# (H2D / D2H, pageable / pinned), one line per column (native and each
# transport). OUT ending in .png gives a PNG, anything else an SVG.
# Needs gnuplot (Debian: gnuplot-nox); nothing in the build or CI does.
set -eu
data=${1:?usage: bench/plot.sh DATA OUT [TITLE]}
out=${2:?usage: bench/plot.sh DATA OUT [TITLE]}
command -v gnuplot >/dev/null 2>&1 || { echo "plot.sh: gnuplot not found (Debian: apt-get install gnuplot-nox)" >&2; exit 1; }
[ -r "$data" ] || { echo "plot.sh: cannot read $data" >&2; exit 1; }
# the first comment line says when and where; the second names the columns
title=${3:-$(sed -n '1s/^# apigen-bench --sweep: //p' "$data")}
cols=$(sed -n 's/^#series\t//p' "$data" | head -1)
[ -n "$cols" ] || { echo "plot.sh: $data has no '#series' header line (not an apigen-bench --sweep file?)" >&2; exit 1; }
ncols=$(printf '%s\n' "$cols" | awk -F'\t' '{print NF}')
series=$(grep -v '^#' "$data" | cut -f1 | awk '!seen[$0]++')
nseries=$(printf '%s\n' "$series" | grep -c .)
[ "$nseries" -gt 0 ] || { echo "plot.sh: $data has no rows" >&2; exit 1; }
rows=$(( (nseries + 1) / 2 ))
case $out in
*.png) term="pngcairo size 1400,$((rows * 450 + 60)) font ',11'" ;;
*) term="svg size 1400,$((rows * 450 + 60)) dynamic font 'sans,12'" ;;
esac
{
    echo "set terminal $term"
    echo "set output '$out'"
    echo "set datafile separator '\t'"
    echo "set datafile missing '-'"
    echo "set logscale x 2"
    echo "set format x '%.0b%B'"
    echo "set xlabel 'transfer size (bytes)'"
    echo "set termoption noenhanced"
    echo "set ylabel 'GB/s (log scale)'"
    echo "set logscale y 10"
    echo "set grid"
    echo "set key top left"
    echo "set multiplot layout $rows,2 title \"$(printf '%s' "$title" | sed 's/"/\\"/g')\" font ',13'"
    printf '%s\n' "$series" | while IFS= read -r s; do
        esc=$(printf '%s' "$s" | sed "s/'/''/g")
        echo "set title '$esc'"
        plot="plot"
        i=2
        while [ "$i" -le "$ncols" ]; do
            name=$(printf '%s\n' "$cols" | cut -f"$i")
            plot="$plot '$data' using (strcol(1) eq '$esc' ? \$2 : NaN):$((i + 1)) with linespoints title '$name',"
            i=$((i + 1))
        done
        echo "${plot%,}"
    done
    echo "unset multiplot"
} | gnuplot
echo "plot.sh: wrote $out"
