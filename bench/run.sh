#!/bin/sh
# bench/run.sh [BUILD_DIR]: the OpenCL (PoCL) and exa tables on this machine.
# BUILD_DIR (default build) must have been built with the opencl and exa targets.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
b=$(cd "${1:-$root/build}" && pwd) || exit 1
echo "== $(date -u '+%Y-%m-%d %H:%M UTC'), $(uname -n), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "== OpenCL ($(clinfo -l 2>/dev/null | sed -n 's/.*Device #0: //p' | head -1))"
"$b/bench/apigen-bench" --worker "$b/bench/bench_ocl" --server "$b/examples/opencl/apigen-server-opencl" \
    --native-dir "" --stub-dir "$b/stub-opencl" --transports "${TRANSPORTS:-unix,tcp,shm}"
echo "== exa"
"$b/bench/apigen-bench" --worker "$b/bench/bench_exa" --server "$b/examples/exa/apigen-server-exa" \
    --native-dir "$b/real" --stub-dir "$b/stub" --transports "${TRANSPORTS:-unix,tcp,shm}"
