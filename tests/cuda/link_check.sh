#!/bin/sh
# cuda.examples.link_against_stub: every example resolves every symbol it
# needs from the stub (ldd -r with the stub first on the library path).
#   link_check.sh STUB_DIR EXAMPLE...
set -u
stub=$1
shift
rc=0
for e in "$@"; do
    out=$(LD_LIBRARY_PATH=$stub ldd -r "$e" 2>&1)
    lib=$(echo "$out" | sed -n 's/.*libcudart.so.13 => \([^ ]*\).*/\1/p')
    if echo "$out" | grep -qE 'undefined symbol|not found'; then
        echo "FAIL: $(basename "$e"):"; echo "$out" | grep -E 'undefined symbol|not found' | sed 's/^/  /'
        rc=1
    elif [ "$(dirname "$lib")" != "$(cd "$stub" && pwd)" ]; then
        echo "FAIL: $(basename "$e") loads libcudart.so.13 from $lib, not from the stub folder"
        rc=1
    else
        echo "ok: $(basename "$e") resolves every symbol from $lib"
    fi
done
exit $rc
