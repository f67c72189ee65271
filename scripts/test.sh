#!/usr/bin/env bash
# Runs the whole test suite: configure, build, ctest. BUILD_DIR overrides
# the build folder (default: build).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD_DIR:-$ROOT/build}
cmake -S "$ROOT" -B "$BUILD"
cmake --build "$BUILD" -j"$(nproc)"
ctest --test-dir "$BUILD" --output-on-failure -j"$(nproc)"
