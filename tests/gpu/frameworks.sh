#!/bin/sh
# tests/gpu/frameworks.sh: programs nobody here wrote, on the GPU machine
# (tests/gpu/frameworks/*.py, through tests/gpu/torch-cases.sh): cuda.core,
# numba-cuda, JAX, PyTorch and Triton in driver mode (their own CUDA runtime and libraries in
# the guest, apigen's libcuda.so.1 alone), CuPy in library mode (every
# stub preloaded; in driver mode cuBLAS 13 and cuFFT need private driver
# tables apigen does not provide: docs/export-tables.md).
#   BUILD=/tmp/b OUT=/dir tests/gpu/frameworks.sh   (BUILD: a full build)
# PyTorch beyond training (torch_extras), Triton on its own, the profiler,
# torch.distributed over NCCL (torch_ddp: one process per GPU; library mode
# forwards NCCL itself).
# Known, 2026-11-29 (docs/gpu-runs/2026-11-29.md): jax_basic's fft, conv and
# solve and torch_extras' fft fail in driver mode (those tables; in library
# mode both give native output);
# torch_profiler has no CUDA events forwarded (CUPTI); numba's kernels fail
# natively (numba 0.68, numpy 2.5).
# Env: TRANSPORTS (default "unix tcp").
set -u
here=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-$PWD/frameworks-out}
tr=${TRANSPORTS:-unix tcp}
rc=0
CASEDIR=$here/frameworks CASES="cudacore_basic numba_basic jax_basic torch_extras triton_basic torch_profiler torch_ddp" \
    TRANSPORTS="$tr" WARM=0 TIMEOUT=${TIMEOUT:-150} STEPS=1 OUT="$OUT/driver" sh "$here/torch-cases.sh" || rc=1
LIBRARIES=1 CASEDIR=$here/frameworks CASES="cupy_basic torch_extras jax_basic torch_ddp" TRANSPORTS="$tr" WARM=0 \
    TIMEOUT=${TIMEOUT:-150} STEPS=1 OUT="$OUT/library" sh "$here/torch-cases.sh" || rc=1
exit $rc
