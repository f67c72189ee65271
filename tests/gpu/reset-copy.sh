#!/bin/sh
# tests/gpu/reset-copy.sh: tests/cuda/reset_copy.c natively and through both CUDA stubs over
# tcp:// and unix:// (pageable copies of 8 and 20 MiB stream through the server's pinned
# staging blocks), before and after the context that the blocks belong to ends. The outputs
# must be identical and every server alive at the end. Exit 1 otherwise.
#   NOBUILD=1 BUILD=/tmp/bd sh tests/gpu/reset-copy.sh   (after a build of both stubs and servers)
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 1
B=${BUILD:-/tmp/bd}
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/reset-copy.XXXXXX")
srv=
stop() { [ -n "$srv" ] && kill "$srv" 2>/dev/null && wait "$srv" 2>/dev/null; srv=; }
trap 'stop; rm -rf "$tmp"' EXIT INT TERM
gcc -O1 -o "$tmp/rt" tests/cuda/reset_copy.c -I"$CUDA_HOME/include" -L"$CUDA_HOME/lib64" -lcudart &&
    gcc -O1 -DDRIVER -o "$tmp/drv" tests/cuda/reset_copy.c -I"$CUDA_HOME/include" -L"$CUDA_HOME/lib64/stubs" -lcuda ||
    exit 1
fail=0 port=$((21000 + $$ % 20000))
for stub in rt drv; do
    case $stub in
    rt) server=$B/examples/cuda/apigen-server-cudart ;;
    drv) server=$B/examples/cuda/apigen-server-cuda ;;
    esac
    LD_LIBRARY_PATH=$CUDA_HOME/lib64 timeout 120 "$tmp/$stub" > "$tmp/$stub.native" 2>&1
    echo "-- $stub natively (exit $?)"; sed 's/^/   /' "$tmp/$stub.native"
    for tr in tcp unix; do
        port=$((port + 1))
        case $tr in tcp) url=tcp://127.0.0.1:$port ;; unix) url=unix://$tmp/s.sock; rm -f "$tmp/s.sock" ;; esac
        "$server" --listen "$url" > "$tmp/$stub.$tr.server" 2>&1 &
        srv=$!
        i=0; while [ $i -lt 100 ] && ! grep -q listening "$tmp/$stub.$tr.server"; do sleep 0.05; i=$((i + 1)); done
        APIGEN_SERVER=$url LD_LIBRARY_PATH=$B/stub timeout 120 "$tmp/$stub" > "$tmp/$stub.$tr" 2>&1
        rc=$?
        alive=yes; kill -0 "$srv" 2>/dev/null || alive=NO
        if cmp -s "$tmp/$stub.native" "$tmp/$stub.$tr" && [ $alive = yes ]; then
            echo "-- $stub over $tr: identical (exit $rc), server alive"
        else
            echo "-- $stub over $tr: DIFFERS (exit $rc), server alive: $alive"; fail=1
            diff "$tmp/$stub.native" "$tmp/$stub.$tr" | sed 's/^/   /'
            tail -5 "$tmp/$stub.$tr.server" | sed 's/^/   server: /'
        fi
        stop
    done
done
[ $fail = 0 ] && echo "reset-copy: PASS" || echo "reset-copy: FAIL"
exit $fail
