#!/bin/sh
# tests/gpu/nvml-procs.sh: the GPU's processes as a guest sees them (docs/nvml.md
# "Processes"). A CUDA program holding 256 MiB (tests/gpu/nvml_hold.cu, -cudart
# shared) runs natively, then through the runtime stub to one
# apigen-server-cuda-family (which also serves NVML) over unix, with
# --isolation process (the default) and --isolation thread. Meanwhile, natively
# and through the NVML stub to the same server:
#   - nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv,noheader
#   - plain nvidia-smi's Processes rows, nvidia-smi -q -d PIDS
#   - tests/nvml/procs.c (every public process list, the holder's pid and
#     name, nvmlSystemGetProcessName of itself compared with argv[0]) and
#     tests/nvml/pynvml_procs.py (pynvml's lists; "SKIP" both sides without it)
# Each output has the holder's pid replaced by HOLDER, so native and forwarded
# compare line by line; the table says identical / differs. Recorded as well
# (reported, not judged):
#   - every NVML call of plain nvidia-smi and of --query-compute-apps through
#     the stub (APIGEN_TRACE): does nvidia-smi call the public process lists
#     or nvmlSystemGetProcessName at all, with the stub's private table empty?
#   - the private-table entries nvidia-smi calls for its Processes box
#     (APIGEN_NVML_EXPORT_TABLE=probe; NVIDIA's mock says slots 213-215)
#   - the native process name of the holder from nvmlSystemGetProcessName vs
#     /proc/PID/cmdline's argv[0] (the rule the stub uses)
#   - the same views through APIGEN_NVML_EXPORT_TABLE=procs (specs/nvml/smiprocs.c:
#     the stub serves nvidia-smi's private process-list entries 213-215 and
#     81, every other entry up to 215 logs and refuses): whether nvidia-smi
#     then shows the guest's process, and which entries it called
#
#   tests/gpu/nvml-procs.sh            (from the repository root)
# Environment: BUILD (default build-gpu-nvml), CUDA_ARCH (default sm_90),
# NVML_INCLUDE (as tests/gpu/nvml.sh), OUT (logs to $OUT/nvml-procs), KEEP=1.
# Exit status 0 when procs.c, pynvml_procs.py and --query-compute-apps are
# identical (HOLDER for the pid) under --isolation process.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 1
build=${BUILD:-build-gpu-nvml}
arch=${CUDA_ARCH:-sm_90}
case $build in /*) ;; *) build=$root/$build ;; esac
if [ -z "${CUDA_HOME:-}" ]; then
    if command -v nvcc >/dev/null 2>&1; then CUDA_HOME=$(dirname "$(dirname "$(command -v nvcc)")")
    else CUDA_HOME=/usr/local/cuda; fi
fi
export CUDA_HOME PATH="$CUDA_HOME/bin:$PATH"
inc=${NVML_INCLUDE:-}
[ -z "$inc" ] && [ -f /opt/apigen/nvml/include/nvml.h ] && inc=/opt/apigen/nvml/include
if [ -z "$inc" ]; then
    whl=$(ls "$root"/.whl/nvidia_nvml_dev-13.0.87-*.whl 2>/dev/null | head -n 1)
    if [ -n "$whl" ]; then
        mkdir -p "$build/nvml-wheel" &&
            python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' "$whl" "$build/nvml-wheel" &&
            inc=$(dirname "$(find "$build/nvml-wheel" -name nvml.h | head -n 1)")
    fi
fi
[ -n "$inc" ] && [ -f "$inc/nvml.h" ] || { echo "nvml-procs.sh: no nvml.h (set NVML_INCLUDE)"; exit 1; }
lib=$(readlink -f "$(ldconfig -p 2>/dev/null | sed -n 's/.*libnvidia-ml.so.1 (libc6,x86-64) => //p' | head -n 1)")
[ -e "$lib" ] || { echo "nvml-procs.sh: no libnvidia-ml.so.1"; exit 1; }
libdir=$(dirname "$lib")
smi=$(command -v nvidia-smi) || { echo "nvml-procs.sh: no nvidia-smi"; exit 1; }
if [ -n "${OUT:-}" ]; then logs=$OUT/nvml-procs; mkdir -p "$logs"; else logs=$(mktemp -d "${TMPDIR:-/tmp}/nvml-procs.XXXXXX"); fi
echo "== $("$smi" --query-gpu=name,driver_version --format=csv,noheader | head -n 1); logs $logs"

mkdir -p "$build"
cmake -S . -B "$build" -DAPIGEN_BUILD_GENERATOR=OFF -DCMAKE_BUILD_TYPE=Release -DCUDAToolkit_ROOT="$CUDA_HOME" \
      -DAPIGEN_CUDA_ARCH="$arch" -DAPIGEN_NVML_INCLUDE_DIR="$inc" -DAPIGEN_NVML_LIBRARY="$lib" \
      > "$logs/configure.log" 2>&1 || { tail -n 40 "$logs/configure.log"; exit 1; }
cmake --build "$build" -j"$(nproc)" --target nvml_stub cudart_stub cuda_stub apigen-server-cuda-family \
      > "$logs/build.log" 2>&1 || { tail -n 60 "$logs/build.log"; exit 1; }
nvcc -cudart shared -arch="$arch" -O2 -o "$build/nvml_hold" tests/gpu/nvml_hold.cu > "$logs/nvcc.log" 2>&1 ||
    { cat "$logs/nvcc.log"; exit 1; }
gcc -O2 -I"$inc" -o "$build/nvml_procs_gpu" tests/nvml/procs.c -L"$libdir" -l:libnvidia-ml.so.1 \
    > "$logs/gcc.log" 2>&1 || { cat "$logs/gcc.log"; exit 1; }
# pynvml: installed, or nvidia-ml-py's wheel carried in .whl/ (as tests/gpu/nvml.sh)
if ! python3 -c 'import pynvml' 2>/dev/null; then
    pw=$(ls "$root"/.whl/nvidia_ml_py-*.whl 2>/dev/null | head -n 1)
    [ -n "$pw" ] && PYTHONPATH=$pw${PYTHONPATH:+:$PYTHONPATH} && export PYTHONPATH
fi
stub=$build/stub
server=$build/examples/cuda/apigen-server-cuda-family
sock=$(mktemp -d "${TMPDIR:-/tmp}/nvml-procs-sock.XXXXXX")
spid='' hpid=''
cleanup() {
    exec 3>&- 2>/dev/null
    [ -n "$hpid" ] && kill "$hpid" 2>/dev/null
    [ -n "$spid" ] && kill "$spid" 2>/dev/null && wait "$spid" 2>/dev/null
    rm -rf "$sock"
    [ -z "${OUT:-}" ] && { [ "${KEEP:-0}" = 1 ] && echo "logs: $logs" || rm -rf "$logs"; }
}
trap cleanup EXIT INT TERM

# hold TAG [env...]: the holder (stdin a fifo kept open on fd 3), hpid its pid
hold() {
    tag=$1; shift
    rm -f "$sock/hold.in"; mkfifo "$sock/hold.in"
    env "$@" "$build/nvml_hold" < "$sock/hold.in" > "$logs/hold.$tag.out" 2> "$logs/hold.$tag.err" &
    hpid=$!
    exec 3> "$sock/hold.in"
    i=0
    while [ $i -lt 600 ] && ! grep -q '^ready' "$logs/hold.$tag.out"; do sleep 0.1; i=$((i + 1)); done
    grep -q '^ready' "$logs/hold.$tag.out" || { echo "holder $tag did not start:"; cat "$logs/hold.$tag.out" "$logs/hold.$tag.err"; }
}
unhold() { exec 3>&-; wait "$hpid" 2>/dev/null; hpid=; }
# views TAG [env...]: every view of the processes, the holder's pid as HOLDER
# ($logs/VIEW.TAG.out; stderr in VIEW.TAG.err)
views() {
    tag=$1; shift
    h=$hpid
    # (stderr apart: the stub's log lines are not the tool's output)
    env "$@" "$smi" --query-compute-apps=pid,process_name,used_memory --format=csv,noheader \
        > "$logs/csv.$tag.raw" 2> "$logs/csv.$tag.err"
    env "$@" "$smi" > "$logs/smi.$tag.raw" 2> "$logs/smi.$tag.err"
    env "$@" "$smi" -q -d PIDS > "$logs/pids.$tag.raw" 2> "$logs/pids.$tag.err"
    env "$@" "$build/nvml_procs_gpu" list "$h" > "$logs/procs.$tag.raw" 2> "$logs/procs.$tag.err"
    env "$@" python3 tests/nvml/pynvml_procs.py "$h" > "$logs/pynvml.$tag.raw" 2> "$logs/pynvml.$tag.err"
    for v in csv smi pids procs pynvml; do
        sed "s/\b$h\b/HOLDER/g" "$logs/$v.$tag.raw" > "$logs/$v.$tag.out"
    done
    # the Processes box only (the rest moves from moment to moment)
    sed -n '/Processes:/,$p' "$logs/smi.$tag.out" > "$logs/box.$tag.out"
    # -q -d PIDS: the process blocks only
    sed -n '/Processes/,$p' "$logs/pids.$tag.out" > "$logs/pidsbox.$tag.out"
}
table=$logs/table.txt
echo "# processes through apigen ($(date -u '+%Y-%m-%d %H:%M UTC')): the holder's pid as HOLDER" > "$table"
fails=0
cmp_row() { # VIEW TAG
    if cmp -s "$logs/$1.native.out" "$logs/$1.$2.out"; then v=identical
    else v="differs ($(diff "$logs/$1.native.out" "$logs/$1.$2.out" | grep -c '^[<>]') lines)"
        diff -u "$logs/$1.native.out" "$logs/$1.$2.out" > "$logs/$1.$2.diff"; fi
    printf '%-44s | %s\n' "$1 ($2)" "$v" >> "$table"
    [ "$v" = identical ]
}

echo "== native"
hold native
views native
# the name NVML gives the holder, and argv[0] as /proc says
tr '\0' '\n' < "/proc/$hpid/cmdline" | head -n 1 > "$logs/holder.argv0"
grep -i "holder\|HOLDER" "$logs/procs.native.out" | head -n 3 > "$logs/holder.native_name"
unhold

for iso in process thread; do
    echo "== forwarded, --isolation $iso"
    rm -f "$sock/f.sock"
    APIGEN_TRACE=$logs/server.$iso.trace "$server" --listen "unix://$sock/f.sock" --isolation $iso \
        > "$logs/server.$iso.log" 2>&1 &
    spid=$!
    i=0; while [ $i -lt 100 ] && ! grep -q listening "$logs/server.$iso.log"; do sleep 0.05; i=$((i + 1)); done
    hold "$iso" APIGEN_SERVER="unix://$sock/f.sock" LD_LIBRARY_PATH="$stub"
    views "$iso" APIGEN_SERVER="unix://$sock/f.sock" LD_LIBRARY_PATH="$stub"
    if [ "$iso" = process ]; then
        # every NVML call of nvidia-smi's process views, and the private
        # entries it calls for them
        APIGEN_TRACE=$logs/smi.trace APIGEN_SERVER="unix://$sock/f.sock" LD_LIBRARY_PATH="$stub" "$smi" > /dev/null 2>&1
        APIGEN_TRACE=$logs/csv.trace APIGEN_SERVER="unix://$sock/f.sock" LD_LIBRARY_PATH="$stub" \
            "$smi" --query-compute-apps=pid,process_name,used_memory --format=csv > /dev/null 2>&1
        APIGEN_NVML_EXPORT_TABLE=probe APIGEN_SERVER="unix://$sock/f.sock" LD_LIBRARY_PATH="$stub" \
            "$smi" > "$logs/smi.probe.out" 2> "$logs/smi.probe.err"
        echo "plain nvidia-smi with the probe table: exit $?" > "$logs/smi.probe.rc"
        APIGEN_NVML_EXPORT_TABLE=probe APIGEN_SERVER="unix://$sock/f.sock" LD_LIBRARY_PATH="$stub" \
            "$smi" --query-compute-apps=pid,process_name,used_memory --format=csv > "$logs/csv.probe.out" 2> "$logs/csv.probe.err"
        echo "--query-compute-apps with the probe table: exit $?" >> "$logs/smi.probe.rc"
        # the process-list experiment: the same views with the private
        # process-list entries served (reported, not judged)
        views procs APIGEN_NVML_EXPORT_TABLE=procs APIGEN_SERVER="unix://$sock/f.sock" LD_LIBRARY_PATH="$stub"
        APIGEN_NVML_EXPORT_TABLE=procs APIGEN_SERVER="unix://$sock/f.sock" LD_LIBRARY_PATH="$stub" \
            "$smi" -q > "$logs/smi_q.procs.out" 2> "$logs/smi_q.procs.err"
        echo "nvidia-smi -q with the procs table: exit $?" >> "$logs/smi.probe.rc"
        env APIGEN_NVML_EXPORT_TABLE=procs APIGEN_SERVER="unix://$sock/f.sock" LD_LIBRARY_PATH="$stub" \
            "$smi" topo -m > "$logs/topo.procs.out" 2> "$logs/topo.procs.err"
        echo "nvidia-smi topo -m with the procs table: exit $?" >> "$logs/smi.probe.rc"
    fi
    unhold
    kill "$spid" 2>/dev/null; wait "$spid" 2>/dev/null; spid=
    if [ "$iso" = process ]; then
        for v in csv box pidsbox; do cmp_row "$v" procs || true; done
    fi
    for v in procs pynvml csv box pidsbox; do
        if ! cmp_row "$v" "$iso"; then
            [ "$iso" = process ] && { [ "$v" = procs ] || [ "$v" = pynvml ] || [ "$v" = csv ]; } && fails=$((fails + 1))
        fi
    done
done
{
    echo
    echo "holder's argv[0] (/proc): $(cat "$logs/holder.argv0")"
    echo "holder natively (procs.c; '=argv0' when NVML's name is argv[0]): $(cat "$logs/holder.native_name")"
    echo "--query-compute-apps natively:"; sed 's/^/  /' "$logs/csv.native.out"
    echo "--query-compute-apps forwarded (process):"; sed 's/^/  /' "$logs/csv.process.out"
    echo "--query-compute-apps forwarded (thread):"; sed 's/^/  /' "$logs/csv.thread.out"
    echo "Processes box natively:"; sed 's/^/  /' "$logs/box.native.out"
    echo "Processes box forwarded (process):"; sed 's/^/  /' "$logs/box.process.out"
    for t in smi csv; do
        [ -f "$logs/$t.trace" ] || continue
        echo "nvidia-smi ($t) through the stub: process-related NVML calls (trace):"
        sed -n 's/^apigen\[[^]]*\] trace: \(nvml[A-Za-z0-9_]*\)(.*) = \([0-9]*\).*/\1 = \2/p' "$logs/$t.trace" |
            grep -i 'process\|accounting\|pids' | sort | uniq -c | sed 's/^/  /'
    done
    cat "$logs/smi.probe.rc"
    echo "Processes box with APIGEN_NVML_EXPORT_TABLE=procs:"; sed 's/^/  /' "$logs/box.procs.out"
    echo "entries nvidia-smi called with the procs table (first call of each, in order; see *.procs.err):"
    cat "$logs"/*.procs.err 2>/dev/null | sed -n 's/.*procs: entry \([0-9]*\) .*/\1/p' | tr '\n' ' ' | sed 's/^/  /; s/$/\n/'
    cat "$logs"/*.procs.err 2>/dev/null | grep 'procs: entry \(81\|21[345]\)' | sed 's/^apigen\[[^]]*\]: /  /' | sort -u
    echo "private entries nvidia-smi called for its process views (probe, call order):"
    cat "$logs/smi.probe.err" "$logs/csv.probe.err" | sed -n 's/.*probe: entry \([0-9]*\) .*/\1/p' | tr '\n' ' ' | sed 's/^/  /; s/$/\n/'
} >> "$table"
cat "$table"
echo "logs: $logs"
[ $fails = 0 ]
