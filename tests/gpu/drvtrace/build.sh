#!/bin/sh
# build.sh [OUTDIR]: builds the tracing libcuda.so.1 with gcc only.
# The symbol list is every function of the toolkit's stub libcuda.so, united
# with those of the real driver when one is found (the driver may export
# more than the stub of the toolkit).
# Env: DRVTRACE_STUB (stub library), DRVTRACE_REAL (real driver, baked in as
# the default the shim loads; found here when unset), CC (gcc).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/build}
mkdir -p "$out"
out=$(cd "$out" && pwd)
stub=${DRVTRACE_STUB:-/usr/local/cuda/lib64/stubs/libcuda.so}
cc=${CC:-gcc}

funcs() { nm -D --defined-only "$1" | awk '$2 ~ /^[TWi]$/ { sub(/@.*/, "", $3); print $3 }'; }

real=${DRVTRACE_REAL:-}
if [ -z "$real" ]; then
    for d in /usr/lib/x86_64-linux-gnu /usr/lib64 /usr/local/nvidia/lib64; do
        if [ -e "$d/libcuda.so.1" ]; then real=$d/libcuda.so.1; break; fi
    done
fi
if [ -z "$real" ] && command -v ldconfig >/dev/null 2>&1; then
    real=$(ldconfig -p | awk '/libcuda\.so\.1 .*x86-64/ { print $NF; exit }')
fi
case "$real" in "$out"/*) real= ;; esac   # never ourselves

funcs "$stub" > "$out/syms.stub"
if [ -n "$real" ] && [ -e "$real" ]; then
    funcs "$(readlink -f "$real")" > "$out/syms.real" || : > "$out/syms.real"
else
    : > "$out/syms.real"
fi
sort -u "$out/syms.stub" "$out/syms.real" | grep -E '^[A-Za-z_][A-Za-z0-9_]*$' > "$out/syms.all"
echo "drvtrace: $(wc -l < "$out/syms.stub") stub symbols, $(wc -l < "$out/syms.real") real-driver symbols, $(wc -l < "$out/syms.all") trampolines; real driver: ${real:-none found}"
if [ -s "$out/syms.real" ]; then
    sort -u "$out/syms.stub" > "$out/syms.stub.sorted"
    sort -u "$out/syms.real" > "$out/syms.real.sorted"
    comm -13 "$out/syms.stub.sorted" "$out/syms.real.sorted" > "$out/syms.only-real"
    comm -23 "$out/syms.stub.sorted" "$out/syms.real.sorted" > "$out/syms.only-stub"
    echo "drvtrace: only in the real driver: $(wc -l < "$out/syms.only-real"); only in the stub: $(wc -l < "$out/syms.only-stub")"
fi

"$here/gen.sh" "$out/syms.all" "$out"
$cc -std=c11 -O2 -g -fPIC -Wall -Wextra -I"$out" \
    -DDRVTRACE_DEFAULT_REAL="\"$real\"" -DDRVTRACE_POOL=4096 \
    -c "$here/drvtrace.c" -o "$out/drvtrace.o"
$cc -DDRVTRACE_POOL=4096 -c "$here/tramp.S" -o "$out/tramp.o"
$cc -c "$out/syms.S" -o "$out/syms.o"
$cc -shared -Wl,-soname,libcuda.so.1 -Wl,-z,noexecstack -o "$out/libcuda.so.1" \
    "$out/drvtrace.o" "$out/tramp.o" "$out/syms.o" -ldl -lpthread
ln -sf libcuda.so.1 "$out/libcuda.so"
echo "drvtrace: built $out/libcuda.so.1"
