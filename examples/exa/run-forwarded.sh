#!/usr/bin/env bash
# Builds apigen and the exa example, starts a local apigen-server-exa on a
# unix socket, runs the unmodified exa demo through the stub library
# (forwarded to that server), and stops the server.
#
#   examples/exa/run-forwarded.sh          (BUILD_DIR=build by default)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD_DIR:-$ROOT/build}

cmake -S "$ROOT" -B "$BUILD"
cmake --build "$BUILD" -j"$(nproc)"

TMP=$(mktemp -d "${TMPDIR:-/tmp}/exa-demo.XXXXXX")
SOCK="unix://$TMP/exa.sock"
SERVER_PID=
stop() {
    if [ -n "$SERVER_PID" ]; then
        kill "$SERVER_PID" 2>/dev/null || true
        wait "$SERVER_PID" 2>/dev/null || true
    fi
    rm -rf "$TMP"
}
trap stop EXIT

echo "== starting $BUILD/examples/exa/apigen-server-exa --listen $SOCK" >&2
"$BUILD/examples/exa/apigen-server-exa" --listen "$SOCK" &
SERVER_PID=$!
for _ in $(seq 1 100); do
    [ -S "$TMP/exa.sock" ] && break
    kill -0 "$SERVER_PID" 2>/dev/null || { echo "the server exited" >&2; exit 1; }
    sleep 0.1
done

echo "== LD_LIBRARY_PATH=$BUILD/stub APIGEN_SERVER=$SOCK $BUILD/examples/exa/exa_demo" >&2
LD_LIBRARY_PATH="$BUILD/stub" APIGEN_SERVER="$SOCK" "$BUILD/examples/exa/exa_demo"
echo "== the demo ran forwarded; stopping the server" >&2
