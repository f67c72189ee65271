#!/bin/sh
# bench/run.sh [BUILD_DIR]: the OpenCL (PoCL) and exa tables on this machine.
# BUILD_DIR (default build) must have been built with the opencl and exa targets.
# SWEEP=1: copy bandwidth against size instead (apigen-bench --sweep, up to
# SWEEP_MAX, default 1G) into BUILD_DIR/sweep-opencl.tsv and sweep-exa.tsv,
# drawn by bench/plot.sh into .svg files of the same names when gnuplot is here.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
b=$(cd "${1:-$root/build}" && pwd) || exit 1
echo "== $(date -u '+%Y-%m-%d %H:%M UTC'), $(uname -n), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
sweep() { # name: the --sweep options for it, when SWEEP=1
    [ "${SWEEP:-0}" = 1 ] && echo "--sweep $b/sweep-$1.tsv --sweep-max ${SWEEP_MAX:-1G}"
}
plot() { # name
    [ "${SWEEP:-0}" = 1 ] || return 0
    if command -v gnuplot >/dev/null 2>&1; then "$root/bench/plot.sh" "$b/sweep-$1.tsv" "$b/sweep-$1.svg"
    else echo "gnuplot not found: draw it elsewhere with bench/plot.sh $b/sweep-$1.tsv OUT.svg"; fi
}
echo "== OpenCL ($(clinfo -l 2>/dev/null | sed -n 's/.*Device #0: //p' | head -1))"
# shellcheck disable=SC2046 # sweep: split on purpose
"$b/bench/apigen-bench" --worker "$b/bench/bench_ocl" --server "$b/examples/opencl/apigen-server-opencl" \
    --native-dir "" --stub-dir "$b/stub-opencl" --transports "${TRANSPORTS:-unix,tcp,shm}" $(sweep opencl) &&
    plot opencl
echo "== exa"
# shellcheck disable=SC2046 # sweep: split on purpose
"$b/bench/apigen-bench" --worker "$b/bench/bench_exa" --server "$b/examples/exa/apigen-server-exa" \
    --native-dir "$b/real" --stub-dir "$b/stub" --transports "${TRANSPORTS:-unix,tcp,shm}" $(sweep exa) &&
    plot exa
