#!/bin/sh
# tests/gpu/frameworks.sh: programs nobody here wrote, on the GPU machine
# (tests/gpu/frameworks/*.py, through tests/gpu/torch-cases.sh): cuda.core,
# numba-cuda, JAX, PyTorch, Triton and CuPy in driver mode (their own CUDA
# runtime and libraries in the guest, apigen's libcuda.so.1 alone; the
# private driver tables cuBLAS, cuFFT and cuDNN ask for: docs/export-tables.md),
# and CuPy, PyTorch and JAX in library mode (every stub preloaded).
#   BUILD=/tmp/b OUT=/dir tests/gpu/frameworks.sh   (BUILD: a full build)
# PyTorch beyond training (torch_extras), Triton on its own, the profiler,
# torch.distributed over NCCL (torch_ddp: one process per GPU; library mode
# forwards NCCL itself).
# Known, 2026-11-29 (docs/gpu-runs/2026-11-29.md, session 29): in driver mode
# torch_extras (torch.fft included) and cupy_basic are identical, jax_basic
# too but for conv, fixed last and run alone since (right);
# torch_profiler has no CUDA events forwarded (CUPTI); numba's kernels fail
# natively (numba 0.68, numpy 2.5).
# Env: TRANSPORTS (default "unix tcp").
set -u
here=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-$PWD/frameworks-out}
tr=${TRANSPORTS:-unix tcp}
rc=0
CASEDIR=$here/frameworks CASES="cudacore_basic numba_basic jax_basic torch_extras triton_basic torch_profiler torch_ddp cupy_basic" \
    TRANSPORTS="$tr" WARM=0 TIMEOUT=${TIMEOUT:-150} STEPS=1 OUT="$OUT/driver" sh "$here/torch-cases.sh" || rc=1
LIBRARIES=1 CASEDIR=$here/frameworks CASES="cupy_basic torch_extras jax_basic torch_ddp" TRANSPORTS="$tr" WARM=0 \
    TIMEOUT=${TIMEOUT:-150} STEPS=1 OUT="$OUT/library" sh "$here/torch-cases.sh" || rc=1
exit $rc
