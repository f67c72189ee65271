#!/bin/sh
# tests/gpu/metrics.sh: on the GPU machine, apigen-server-nvml --metrics over
# the real libnvidia-ml.so.1 (built as tests/gpu/nvml.sh builds it), under
# --isolation process (the collector process) and thread:
#   - the scrape passes promtool check metrics (when promtool is here),
#   - one apigen_gpu_memory_total_bytes per GPU, equal to nvidia-smi's
#     memory.total (MiB), with its index and UUID; used memory and both
#     utilizations present and well-formed (they change from one moment to
#     the next), used within [0, total], utilizations within [0, 1],
#   - an nvml_query run forwarded meanwhile is counted (apigen_calls_total of
#     nvmlInit_v2 >= 1, sessions ended 1),
# then bench/metrics.sh (exa over shm, sync call with and without --metrics)
# on this quiet machine.
#
#   tests/gpu/metrics.sh          (from the repository root)
#
# Environment: BUILD (default build-gpu-nvml), NVML_INCLUDE, NVML_LIB (as
# tests/gpu/nvml.sh), BENCH_BUILD (default build-gpu-bench), ROUNDS (bench
# rounds, default 7), BENCH=0 (no bench). Exit status 0 when every check passed.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 1
build=${BUILD:-build-gpu-nvml}
inc=${NVML_INCLUDE:-/opt/apigen/nvml/include}
[ -f "$inc/nvml.h" ] || { echo "metrics.sh: no nvml.h in $inc (set NVML_INCLUDE)"; exit 1; }
lib=${NVML_LIB:-$(ldconfig -p 2>/dev/null | sed -n 's/.*libnvidia-ml.so.1 (libc6,x86-64) => //p' | head -n 1)}
[ -n "$lib" ] && [ -e "$lib" ] || { echo "metrics.sh: no libnvidia-ml.so.1 (set NVML_LIB)"; exit 1; }
lib=$(readlink -f "$lib")
tmp=$(mktemp -d "${TMPDIR:-/tmp}/apigen-gpu-metrics.XXXXXX")
spid=
cleanup() { [ -n "$spid" ] && kill "$spid" 2>/dev/null && wait "$spid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT INT TERM
bad=0
check() { # what, condition (shell test as a string)
    if eval "$2"; then echo "  ok: $1"; else echo "  FAIL: $1"; bad=1; fi
}
echo "== build ($build)"
cmake -S . -B "$build" -DAPIGEN_BUILD_GENERATOR=OFF -DCMAKE_BUILD_TYPE=Release \
      -DAPIGEN_NVML_INCLUDE_DIR="$inc" -DAPIGEN_NVML_LIBRARY="$lib" > "$tmp/configure.log" 2>&1 &&
    cmake --build "$build" -j"$(nproc)" --target nvml_stub apigen-server-nvml nvml_query > "$tmp/build.log" 2>&1 ||
    { tail -n 40 "$tmp/configure.log" "$tmp/build.log"; exit 1; }
server=$build/examples/nvml/apigen-server-nvml
promtool=$(command -v promtool || ls /opt/apigen/bin/promtool 2>/dev/null)
scrape() { python3 -c 'import sys, urllib.request; sys.stdout.write(urllib.request.urlopen(sys.argv[1], timeout=30).read().decode())' "$1"; }
nvidia-smi --query-gpu=index,uuid,memory.total --format=csv,noheader,nounits > "$tmp/smi.csv"
for iso in process thread; do
    echo "== apigen-server-nvml --isolation $iso --metrics"
    "$server" --listen "unix://$tmp/s.sock" --isolation $iso --metrics tcp://127.0.0.1:0 > "$tmp/server.log" 2>&1 &
    spid=$!
    i=0
    while [ $i -lt 200 ] && ! grep -q listening "$tmp/server.log"; do sleep 0.05; i=$((i + 1)); done
    url=$(sed -n 's/.*metrics on \(http[^ ]*\).*/\1/p' "$tmp/server.log" | head -n 1)
    [ -n "$url" ] || { cat "$tmp/server.log"; exit 1; }
    LD_LIBRARY_PATH=$build/stub APIGEN_SERVER="unix://$tmp/s.sock" "$build/examples/nvml/nvml_query" > "$tmp/query.out" 2>&1
    sleep 0.5
    scrape "$url" > "$tmp/scrape.txt" || { echo "  FAIL: no scrape"; bad=1; }
    if [ -n "$promtool" ]; then
        check "promtool check metrics" '"$promtool" check metrics < "$tmp/scrape.txt" > "$tmp/promtool.out" 2>&1'
    else
        echo "  promtool not found: not validated"
    fi
    while IFS=', ' read -r idx uuid mib; do
        total=$(sed -n "s/^apigen_gpu_memory_total_bytes{gpu=\"$idx\",uuid=\"$uuid\"} //p" "$tmp/scrape.txt")
        used=$(sed -n "s/^apigen_gpu_memory_used_bytes{gpu=\"$idx\",uuid=\"$uuid\"} //p" "$tmp/scrape.txt")
        util=$(sed -n "s/^apigen_gpu_utilization_ratio{gpu=\"$idx\",uuid=\"$uuid\"} //p" "$tmp/scrape.txt")
        mutil=$(sed -n "s/^apigen_gpu_memory_utilization_ratio{gpu=\"$idx\",uuid=\"$uuid\"} //p" "$tmp/scrape.txt")
        check "GPU $idx ($uuid): total $total bytes = nvidia-smi's $mib MiB" \
            '[ -n "$total" ] && [ $((total / 1048576)) = "$mib" ]'
        check "GPU $idx: used $used in [0, total]" '[ -n "$used" ] && [ "$used" -le "$total" ]'
        check "GPU $idx: utilization $util, memory utilization $mutil in [0, 1]" \
            'echo "$util $mutil" | grep -Eq "^(0|1)\.[0-9]+ (0|1)\.[0-9]+$"'
    done < "$tmp/smi.csv"
    n=$(grep -c '^apigen_gpu_memory_total_bytes{' "$tmp/scrape.txt")
    check "$n GPUs in the scrape, $(wc -l < "$tmp/smi.csv") in nvidia-smi" '[ "$n" = "$(wc -l < "$tmp/smi.csv")" ]'
    calls=$(sed -n 's/^apigen_calls_total{api="nvml",function="nvmlInit_v2"} //p' "$tmp/scrape.txt")
    ended=$(sed -n 's/^apigen_sessions_ended_total{api="nvml"} //p' "$tmp/scrape.txt")
    check "nvml_query's session counted (nvmlInit_v2 calls $calls, sessions ended $ended)" \
        '[ "${calls:-0}" -ge 1 ] && [ "$ended" = 1 ]'
    kill "$spid"; wait "$spid" 2>/dev/null; spid=
    cp "$tmp/scrape.txt" "$tmp/scrape.$iso.txt"
done
echo "== the scrape (--isolation process), GPU and session lines"
grep -E '^apigen_(gpu|session)' "$tmp/scrape.process.txt"

[ "${BENCH:-1}" = 0 ] && exit $bad
echo "== bench/metrics.sh"
bb=${BENCH_BUILD:-build-gpu-bench}
cmake -S . -B "$bb" -DAPIGEN_BUILD_GENERATOR=OFF -DCMAKE_BUILD_TYPE=Release > "$tmp/bconf.log" 2>&1 &&
    cmake --build "$bb" -j"$(nproc)" --target apigen-bench bench_exa apigen-server-exa exa_stub exa > "$tmp/bbuild.log" 2>&1 ||
    { tail -n 40 "$tmp/bconf.log" "$tmp/bbuild.log"; exit 1; }
CPUS=${CPUS:-2:3} bench/metrics.sh "$bb" "${ROUNDS:-7}"
exit $bad
