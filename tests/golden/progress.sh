#!/bin/sh
# apigen's progress lines (gen/progress.c): APIGEN_PROGRESS=all shows every
# phase and "done"; APIGEN_PROGRESS=0 and, unset, a stderr that is no terminal
# show nothing. The output is the same either way.
#   progress.sh APIGEN SOURCE_ROOT
set -u
apigen=$1 root=$2
tmp=$(mktemp -d "${TMPDIR:-/tmp}/apigen-progress.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
cd "$root" || exit 2
status=0
APIGEN_PROGRESS=all "$apigen" specs/exa.yaml -o "$tmp/on" 2>"$tmp/on.err" || { cat "$tmp/on.err"; exit 1; }
for want in 'apigen: \[[0-9.]* s\] specs/exa.yaml: parsing 1 header$' \
            'apigen: \[[0-9.]* s\] specs/exa.yaml: checking [0-9]* functions against the spec$' \
            'apigen: \[[0-9.]* s\] specs/exa.yaml: writing exa_stub.c$' \
            'apigen: \[[0-9.]* s\] done$'; do
    grep -q "$want" "$tmp/on.err" || { echo "FAIL: no line matching '$want' with APIGEN_PROGRESS=all"; status=1; }
done
APIGEN_PROGRESS=0 "$apigen" specs/exa.yaml -o "$tmp/off" 2>"$tmp/off.err" || { cat "$tmp/off.err"; exit 1; }
[ -s "$tmp/off.err" ] && { echo "FAIL: APIGEN_PROGRESS=0 printed:"; cat "$tmp/off.err"; status=1; }
env -u APIGEN_PROGRESS "$apigen" specs/exa.yaml -o "$tmp/unset" 2>"$tmp/unset.err" </dev/null || exit 1
[ -s "$tmp/unset.err" ] && { echo "FAIL: unset, with stderr a file, it printed:"; cat "$tmp/unset.err"; status=1; }
diff -r "$tmp/on" "$tmp/off" >/dev/null || { echo "FAIL: the output differs with progress on"; status=1; }
[ $status = 0 ] && { cat "$tmp/on.err"; echo "progress: every phase with APIGEN_PROGRESS=all, nothing with 0 or without a terminal"; }
exit $status
