#!/bin/bash
# bench/torch-trips.sh: synchronous round trips per PyTorch training step,
# by function, from the guest's trace (APIGEN_TRACE's "apigen wire" lines):
# bench/torch_step.py run over one transport for 20 and for 60 steps, the
# difference / 40 (start-up and warm-up cancel out), and the calls answered
# in the guest per step ([cached, ...]). On the GPU machine, after building
# into $BUILD as bench/torch-step.sh needs:
#
#   BUILD=/tmp/bd MODE=driver CASES="cnn transformer" bench/torch-trips.sh
#
# MODE: driver (NVIDIA's runtime and libraries over apigen's libcuda) or
# library (every apigen stub preloaded); CASES (cnn transformer);
# TORCH_STEP_BATCH_<CASE> as bench/torch_step.py reads them; PYTHON;
# TRANSPORT (unix, default, or tcp: loopback port TCP_PORT, default 18817).
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$root/build}
py=${PYTHON:-python3}
mode=${MODE:-driver}
cases=${CASES:-cnn transformer}
tmp=$(mktemp -d /tmp/apigen-torch-trips.XXXXXX)
spid=
cleanup() { [ -n "$spid" ] && kill "$spid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
preload=
case $mode in
driver) server=$build/examples/cuda/apigen-server-cuda libdir=$build/stub-driver ;;
library)
    server=$build/examples/cuda/apigen-server-cuda-family libdir=$build/stub
    . "$root/bench/torch-stubs.sh"
    for l in $libstubs; do [ -e "$libdir/$l" ] && preload="$preload${preload:+:}$libdir/$l"; done ;;
*) echo "torch-trips.sh: MODE is driver or library" >&2; exit 2 ;;
esac
[ -x "$server" ] || { echo "torch-trips.sh: no $server" >&2; exit 2; }
case ${TRANSPORT:-unix} in
unix) url=unix://$tmp/s.sock ;;
tcp) url=tcp://127.0.0.1:${TCP_PORT:-18817} ;;
*) echo "torch-trips.sh: TRANSPORT is unix or tcp" >&2; exit 2 ;;
esac
"$server" --listen "$url" > "$tmp/server.log" 2>&1 &
spid=$!
if [ "${TRANSPORT:-unix}" = unix ]; then
    i=0; while [ ! -S "$tmp/s.sock" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
else
    sleep 1
fi
for c in $cases; do
    for st in 20 60; do
        rm -f "$tmp/trace.$st" # APIGEN_TRACE appends
        APIGEN_SERVER="$url" APIGEN_TRACE="$tmp/trace.$st" LD_PRELOAD="$preload" \
            LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
            timeout 300 "$py" "$root/bench/torch_step.py" "$c" "$st" 10 > "$tmp/out" 2>&1 ||
            { echo "torch-trips.sh: $c, $st steps failed:"; tail -3 "$tmp/out"; exit 1; }
        sed -n 's/.*apigen wire.*: rt \([A-Za-z0-9_]*\) .*/\1/p' "$tmp/trace.$st" | sort | uniq -c |
            awk '{print $2, $1}' | sort > "$tmp/count.$st"
        grep -c '\[cached' "$tmp/trace.$st" > "$tmp/kept.$st"
    done
    echo "== $mode $c (${TRANSPORT:-unix}): synchronous round trips per step, by function"
    join -a 2 -e 0 -o 0,1.2,2.2 "$tmp/count.20" "$tmp/count.60" |
        awk '{d = ($3 - $2) / 40; t += d; if (d >= 0.2) printf "  %-50s %.2f\n", $1, d}
             END {printf "  %-50s %.2f\n", "total", t}'
    echo "  answered in the guest per step: $(( ($(cat "$tmp/kept.60") - $(cat "$tmp/kept.20")) / 40 ))"
done
