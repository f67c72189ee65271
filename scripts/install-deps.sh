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
    libssl-dev openssl libucx-dev \
    python3 python3-pip unzip \
    libzstd-dev libxxhash-dev
# libzstd-dev: the library docs/tutorial.md forwards (its test, tutorial.commands).
# libxxhash-dev: xxhash.h, the runtime's page digests (runtime/pages.c).
# BENCH=1: also gnuplot, which bench/plot.sh uses to draw apigen-bench --sweep
# data (copy bandwidth against size); nothing in the build or the tests needs it.
if [ "${BENCH:-0}" = 1 ]; then
    $SUDO apt-get install -y --no-install-recommends gnuplot-nox
fi

# nvml.h is not in the CUDA toolkit: NVIDIA ships it in the nvidia-nvml-dev
# wheel on PyPI. 13.0.87 is the header of CUDA 13.0 (driver 580), the GPU
# machine's driver line. The wheel carries the header only (no
# libnvidia-ml stub): CI's server links the fake library of tests/nvml/.
# Idempotent: skipped when that version is already in place; the wheel is
# cached (APIGEN_WHEEL_CACHE) so a rerun needs no network.
NVML_VERSION=${NVML_VERSION:-13.0.87}
NVML_PREFIX=${NVML_PREFIX:-/opt/apigen/nvml}
if [ "$(cat "$NVML_PREFIX/VERSION" 2>/dev/null)" != "$NVML_VERSION" ]; then
    cache=${APIGEN_WHEEL_CACHE:-$HOME/.cache/apigen-cuda-wheels}
    mkdir -p "$cache"
    whl=$(ls "$cache"/nvidia_nvml_dev-"$NVML_VERSION"-*.whl 2>/dev/null | head -n 1 || true)
    if [ -z "$whl" ]; then
        ${PIP:-pip3} download --no-deps --quiet --disable-pip-version-check -d "$cache" \
            "nvidia-nvml-dev==$NVML_VERSION"
        whl=$(ls "$cache"/nvidia_nvml_dev-"$NVML_VERSION"-*.whl | head -n 1)
    fi
    tmp=$(mktemp -d)
    unzip -q -o "$whl" '*/include/nvml.h' -d "$tmp"
    $SUDO mkdir -p "$NVML_PREFIX/include"
    $SUDO cp "$(find "$tmp" -name nvml.h | head -n 1)" "$NVML_PREFIX/include/nvml.h"
    echo "$NVML_VERSION" | $SUDO tee "$NVML_PREFIX/VERSION" >/dev/null
    rm -rf "$tmp"
fi

# promtool, which checks the servers' Prometheus text (e2e.metrics.*,
# nvml.metrics.*), and prometheus, which scrapes one in e2e.metrics.prometheus.
# Debian has them only in the prometheus package (a 19 MB download, 96 MB
# installed with a service, web assets and their JavaScript packages, none of
# which the tests use): only the two binaries (48 + 50 MB) are taken out of
# the .deb, into /opt/apigen/bin, and the package is not installed. Without
# them the tests still parse and check the scrapes themselves, and
# e2e.metrics.promtool and e2e.metrics.prometheus are skipped saying why.
PROMTOOL_DIR=${PROMTOOL_DIR:-/opt/apigen/bin}
if [ ! -x "$PROMTOOL_DIR/promtool" ] || [ ! -x "$PROMTOOL_DIR/prometheus" ]; then
    tmp=$(mktemp -d)
    (cd "$tmp" && $SUDO apt-get download prometheus)
    dpkg-deb --fsys-tarfile "$tmp"/prometheus_*.deb | tar -x -C "$tmp" ./usr/bin/promtool ./usr/bin/prometheus
    $SUDO mkdir -p "$PROMTOOL_DIR"
    $SUDO cp "$tmp/usr/bin/promtool" "$tmp/usr/bin/prometheus" "$PROMTOOL_DIR/"
    $SUDO rm -rf "$tmp"
fi

# pynvml (NVIDIA's nvidia-ml-py, of the same driver line) for the test that
# runs it natively and through the stub (nvml.pynvml.*): a pure Python
# module, kept out of the system's Python in /opt/apigen/python (the tests
# put it on PYTHONPATH).
PYNVML_VERSION=${PYNVML_VERSION:-13.580.82}
PYNVML_PREFIX=${PYNVML_PREFIX:-/opt/apigen/python}
if [ "$(cat "$PYNVML_PREFIX/PYNVML_VERSION" 2>/dev/null)" != "$PYNVML_VERSION" ]; then
    $SUDO mkdir -p "$PYNVML_PREFIX"
    $SUDO ${PIP:-pip3} install --quiet --disable-pip-version-check --no-deps --upgrade \
        --target "$PYNVML_PREFIX" "nvidia-ml-py==$PYNVML_VERSION"
    echo "$PYNVML_VERSION" | $SUDO tee "$PYNVML_PREFIX/PYNVML_VERSION" >/dev/null
fi
