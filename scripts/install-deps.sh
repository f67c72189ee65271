#!/usr/bin/env bash
# Installs what building and testing apigen needs on Debian 12 (as root).
# The CUDA toolkit is not a Debian package: the CUDA parts build and test
# when it is present (CUDA_HOME or /usr/local/cuda) and skip otherwise.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
SUDO=
[ "$(id -u)" -eq 0 ] || SUDO=sudo
$SUDO apt-get update
$SUDO apt-get install -y --no-install-recommends \
    cmake gcc g++ make pkg-config binutils libc6-dev file procps \
    libclang-dev libyaml-dev \
    clang libclang-rt-14-dev valgrind \
    pocl-opencl-icd ocl-icd-libopencl1 ocl-icd-opencl-dev opencl-headers clinfo \
    libssl-dev openssl libucx-dev
# BENCH=1: also gnuplot, which bench/plot.sh uses to draw apigen-bench --sweep
# data (copy bandwidth against size); nothing in the build or the tests needs it.
if [ "${BENCH:-0}" = 1 ]; then
    $SUDO apt-get install -y --no-install-recommends gnuplot-nox
fi
