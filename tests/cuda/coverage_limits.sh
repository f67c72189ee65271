#!/bin/sh
# tests/cuda/coverage_limits.sh COVERAGE_MD: the cudart coverage report says
# what each partly working function does not do (issue 13): every no-op of
# the hidden entry points and every pinned-memory function names its limits,
# and no row claims a copy works that returns cudaErrorNotSupported.
set -u
md=$1
fails=0
for fn in __cudaRegisterHostVar __cudaRegisterUnifiedTable __cudaRegisterManagedVar \
          __cudaUnregisterFatBinary cudaMallocHost cudaHostAlloc cudaHostRegister \
          cudaPointerGetAttributes cudaMemcpy3DAsync cudaGraphAddNode cudaGraphAddMemcpyNode; do
    row=$(grep "^| \`$fn\` |" "$md")
    [ -n "$row" ] || { echo "FAIL: $fn: no row in $md"; fails=$((fails + 1)); continue; }
    case $row in
    *"**limits:**"*) ;;
    *) echo "FAIL: $fn: its row names no limits: $row"; fails=$((fails + 1)) ;;
    esac
done
if grep -q "^| of which work with limits" "$md"; then :; else
    echo "FAIL: $md: no count of functions with limits"; fails=$((fails + 1))
fi
[ $fails = 0 ] && echo "PASS: the coverage report names the limits"
[ $fails = 0 ]
