#!/bin/sh
# Writes specs/cudart/errors.c (or OUT): cudaGetErrorName / cudaGetErrorString
# as the real runtime answers them, for every constant of enum cudaError in
# the toolkit's driver_types.h. Run after a toolkit upgrade and commit the
# result; the test cuda.errors_current compares it with the real library.
# usage: tests/cuda/gen_errors.sh [OUT [INCLUDE_DIR LIB_DIR]]
#        (default: $CUDA_HOME/include and $CUDA_HOME/lib64; CUDA_HOME defaults to /usr/local/cuda)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cuda=${CUDA_HOME:-/usr/local/cuda}
out=${1:-$root/specs/cudart/errors.c}
inc=${2:-$cuda/include}
lib=${3:-$cuda/lib64}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sed -n '/^enum __device_builtin__ cudaError$/,/^};/p' "$inc/driver_types.h" |
    sed -n 's/^ *\(cuda[A-Za-z0-9_]*\) *= *[0-9][0-9]*.*/X(\1)/p' > "$tmp/error_names.inc"
[ -s "$tmp/error_names.inc" ] || { echo "gen_errors: no enum cudaError in $inc/driver_types.h" >&2; exit 1; }
cc -std=c11 -I"$tmp" -I"$inc" -o "$tmp/g" "$here/gen_errors.c" -L"$lib" -lcudart -Wl,-rpath,"$lib"
"$tmp/g" > "$tmp/out.c"
cat "$tmp/out.c" > "$out"
