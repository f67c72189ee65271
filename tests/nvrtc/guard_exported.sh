#!/bin/sh
# The NVRTC compile guard works only where the server exports the C library
# functions it defines (specs/nvrtc/host_files.c, -Wl,--dynamic-list): NVRTC
# must bind to them, not to the C library's. Each SERVER given must export
# every name of LIST.
#   guard_exported.sh LIST SERVER...
set -u
list=$1
shift
names=$(sed -n 's/.*{\(.*\)}.*/\1/p' "$list" | tr ';' '\n' | tr -d ' ' | grep .)
rc=0
for server in "$@"; do
    for n in $names; do
        if ! nm -D --defined-only "$server" | awk '{print $3}' | grep -qx "$n"; then
            echo "FAIL: $(basename "$server") does not export $n: NVRTC would read the server's files unguarded"
            rc=1
        fi
    done
    [ $rc = 0 ] && echo "PASS: $(basename "$server") exports $(echo $names | wc -w) guard functions ($(echo $names))"
done
exit $rc
