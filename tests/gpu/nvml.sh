#!/bin/sh
# tests/gpu/nvml.sh: on the GPU machine (NVIDIA driver 580, nvidia-smi,
# pynvml), build the NVML stub and apigen-server-nvml against the real
# libnvidia-ml.so.1 from the committed generated/nvml (no libclang), then run
# natively and forwarded (unix, tcp, shm):
#   examples/nvml/nvml_query, examples/nvml/pynvml_query.py,
#   nvidia-smi, -L, -q, -q -d MEMORY,UTILIZATION,CLOCK,POWER,TEMPERATURE,
#   --query-gpu=name,uuid,memory.total,memory.used,utilization.gpu --format=csv,
#   topo -m
# and print a table: "identical", "same shape" (equal once every digit is
# masked: fields that change from one moment to the next, such as
# temperatures, power draw, clocks, utilization, used memory and the
# timestamp, compare as present and well-formed), or "differs" (the diff is
# in the logs). nvidia-smi -q (and -q -d) compare after the rows nvidia-smi
# reads only through the entries of its private export table are set aside
# on both sides: GPU Part Number, FRU Part Number, PCIe Host Max, Sparse
# Operation Mode and Deferred Clocks' Memory (the stub's table offers no
# entry, so nvidia-smi prints "Uninitialized" there; docs/nvml.md). It also
# records:
#   - nvidia-smi once more with APIGEN_NVML_EXPORT_TABLE=none (no private
#     table at all: nvidia-smi refuses to run, "Mismatch in versions"),
#   - nvidia-smi -q with APIGEN_NVML_EXPORT_TABLE=probe (256 table entries
#     that log once and answer NVML_ERROR_NOT_SUPPORTED: which entries it
#     calls, and how its output changes; reported, not judged),
#   - nvidia-smi -q through the stub with APIGEN_TRACE (every call and its
#     result: smi_q.trace) and the calls that failed forwarded with
#     NVML_ERROR_UNINITIALIZED (none is expected: such a row would be a
#     forwarding bug, not a private entry),
#   - which libnvidia-ml.so.1 nvidia-smi loaded (LD_DEBUG=libs: does it honour
#     LD_LIBRARY_PATH?),
#   - the nvml* names nvidia-smi and pynvml look up that the stub does not
#     export (LD_DEBUG=symbols), and the stub's "not supported" log lines
#     (each unsupported call, once by name) and the server's refusals,
#   - then tests/gpu/nvml-procs.sh (PROCS=0 skips it): the GPU's processes
#     as a guest sees them, a guest CUDA program holding memory meanwhile,
#   - the real library's export list with the driver version
#     (libnvidia-ml.exports: commit it as tests/nvml/libnvidia-ml.exports for
#     nvml.symbols.parity) and the symbol parity against it.
#
#   tests/gpu/nvml.sh          (from the repository root)
#
# Environment: BUILD (default build-gpu-nvml), NVML_INCLUDE (folder of nvml.h;
# default: /opt/apigen/nvml/include, then the nvidia-nvml-dev 13.0.87 wheel in
# .whl/ of the checkout, then $CUDA_HOME/include, /usr/local/cuda/include,
# /usr/include: a header of another version may not compile with generated/nvml), NVML_LIB (default: ldconfig's libnvidia-ml.so.1), OUT (when
# set, the logs and the table go to $OUT/nvml), KEEP=1 keeps the logs folder.
# Exit status: 0 when every row (nvml_query, pynvml and each nvidia-smi
# command) is identical or same shape, with the same exit status, on every
# transport; 1 otherwise. nvidia-smi -L must be identical.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 1
build=${BUILD:-build-gpu-nvml}
case $build in /*) ;; *) build=$root/$build ;; esac
mkdir -p "$build"

# nvml.h: the header generated/nvml was made from (nvidia-nvml-dev 13.0.87)
# first: installed by scripts/install-deps.sh, or its wheel carried in .whl/
# (the GPU machine has no network), then the toolkit's
inc=${NVML_INCLUDE:-}
if [ -z "$inc" ] && [ -f /opt/apigen/nvml/include/nvml.h ]; then inc=/opt/apigen/nvml/include; fi
if [ -z "$inc" ]; then
    whl=$(ls "$root"/.whl/nvidia_nvml_dev-13.0.87-*.whl 2>/dev/null | head -n 1)
    if [ -n "$whl" ] && command -v unzip >/dev/null 2>&1; then
        mkdir -p "$build/nvml-wheel" &&
            unzip -q -o "$whl" '*/include/nvml.h' -d "$build/nvml-wheel" &&
            inc=$(dirname "$(find "$build/nvml-wheel" -name nvml.h | head -n 1)")
    elif [ -n "$whl" ]; then
        mkdir -p "$build/nvml-wheel" &&
            python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' "$whl" "$build/nvml-wheel" &&
            inc=$(dirname "$(find "$build/nvml-wheel" -name nvml.h | head -n 1)")
    fi
fi
if [ -z "$inc" ]; then
    for d in "${CUDA_HOME:-/usr/local/cuda}/include" /usr/local/cuda/include /usr/include; do
        [ -f "$d/nvml.h" ] && { inc=$d; break; }
    done
fi
[ -n "$inc" ] && [ -f "$inc/nvml.h" ] || {
    echo "nvml.sh: no nvml.h (scripts/install-deps.sh installs it in /opt/apigen/nvml/include; or set NVML_INCLUDE)"; exit 1; }
lib=${NVML_LIB:-$(ldconfig -p 2>/dev/null | sed -n 's/.*libnvidia-ml.so.1 (libc6,x86-64) => //p' | head -n 1)}
[ -n "$lib" ] && [ -e "$lib" ] || { echo "nvml.sh: no libnvidia-ml.so.1 (set NVML_LIB)"; exit 1; }
lib=$(readlink -f "$lib")
libdir=$(dirname "$lib")
for t in cmake make gcc nm; do
    command -v $t >/dev/null 2>&1 || { echo "nvml.sh: '$t' is missing"; exit 1; }
done
driver=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -n 1)
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1)
echo "== NVML on $gpu, driver $driver: $lib, nvml.h from $inc"

if [ -n "${OUT:-}" ]; then logs=$OUT/nvml; mkdir -p "$logs"; else logs=$(mktemp -d "${TMPDIR:-/tmp}/apigen-nvml.XXXXXX"); fi
mkdir -p "$build"
echo "== build ($build)"
cmake -S . -B "$build" -DAPIGEN_BUILD_GENERATOR=OFF -DCMAKE_BUILD_TYPE=Release \
      -DAPIGEN_NVML_INCLUDE_DIR="$inc" -DAPIGEN_NVML_LIBRARY="$lib" > "$logs/configure.log" 2>&1 ||
    { tail -n 40 "$logs/configure.log"; exit 1; }
cmake --build "$build" -j"$(nproc)" --target nvml_stub apigen-server-nvml nvml_query > "$logs/build.log" 2>&1 ||
    { tail -n 60 "$logs/build.log"; exit 1; }
stub=$build/stub
server=$build/examples/nvml/apigen-server-nvml
query=$build/examples/nvml/nvml_query
[ -x "$server" ] && [ -e "$stub/libnvidia-ml.so.1" ] && [ -x "$query" ] || { echo "nvml.sh: the build made no stub/server/example"; exit 1; }

# the real library's exports, for tests/nvml/libnvidia-ml.exports
{
    echo "# nm -D --defined-only of $lib (driver $driver, $gpu), $(date -u +%Y-%m-%d) by tests/gpu/nvml.sh"
    nm -D --defined-only "$lib" | awk '{print $3}' | sed 's/@.*//' | sort -u
} > "$logs/libnvidia-ml.exports"
sh tests/nvml/parity.sh "$inc/nvml.h" "$stub/libnvidia-ml.so.1" generated/nvml/nvml_coverage.md "$logs/libnvidia-ml.exports" > "$logs/parity.txt" 2>&1
head -n 3 "$logs/parity.txt"
nm -D --defined-only "$stub/libnvidia-ml.so.1" | awk '{print $3}' | sed 's/@.*//' | sort -u > "$logs/stub.exports"

sockdir=$(mktemp -d "${TMPDIR:-/tmp}/apigen-nvml-sock.XXXXXX") # short path, out of $OUT
port=$(( 30000 + ($$ % 20000) ))
shmname=apigen-nvml-$$
"$server" --listen "unix://$sockdir/nvml.sock" --listen "tcp://127.0.0.1:$port" > "$logs/server.log" 2>&1 &
spid=$!
"$server" --listen "shm://$shmname" --isolation thread > "$logs/server-shm.log" 2>&1 &
spid2=$!
cleanup() {
    kill "$spid" "$spid2" 2>/dev/null; wait "$spid" "$spid2" 2>/dev/null
    rm -rf "$sockdir"
    if [ -z "${OUT:-}" ]; then [ "${KEEP:-0}" = 1 ] && echo "logs: $logs" || rm -rf "$logs"; fi
}
trap cleanup EXIT INT TERM
i=0
while [ $i -lt 100 ] && { [ "$(grep -c listening "$logs/server.log" 2>/dev/null)" -lt 2 ] || ! grep -q listening "$logs/server-shm.log" 2>/dev/null; }; do
    sleep 0.05; i=$((i + 1))
done

url_of() {
    case $1 in
    unix) echo "unix://$sockdir/nvml.sock" ;; tcp) echo "tcp://127.0.0.1:$port" ;; shm) echo "shm://$shmname" ;;
    esac
}
# run TAG MODE CMD...: $logs/TAG.MODE.{out,err,rc}
run() {
    tag=$1 mode=$2; shift 2
    if [ "$mode" = native ]; then
        LD_LIBRARY_PATH="$libdir" timeout 120 "$@" > "$logs/$tag.$mode.out" 2> "$logs/$tag.$mode.err"
    else
        APIGEN_SERVER=$(url_of "$mode") APIGEN_TIMEOUT_MS=60000 LD_LIBRARY_PATH="$stub" timeout 120 "$@" \
            > "$logs/$tag.$mode.out" 2> "$logs/$tag.$mode.err"
    fi
    echo $? > "$logs/$tag.$mode.rc"
}
mask() { sed 's/[0-9]/#/g; s/#\(#\)*/#/g' "$1"; }
# private_rows FILE: nvidia-smi -q output with the values of the rows that
# come only from its private export table's entries set aside (see above)
private_rows() {
    awk '/^ *Deferred Clocks *$/ { dc = 1; print; next }
         dc && /^ *Memory *:/ { sub(/:.*/, ": (private table entry)"); dc = 0; print; next }
         { dc = 0 }
         /^ *(GPU Part Number|FRU Part Number|Host Max|Sparse Operation Mode) *:/ { sub(/:.*/, ": (private table entry)") }
         { print }' "$1"
}
# verdict TAG MODE: identical | same shape | differs, with the exit statuses
verdict() {
    a=$logs/$1.native b=$logs/$1.$2
    ra=$(cat "$a.rc") rb=$(cat "$b.rc")
    if [ "$ra" != "$rb" ]; then echo "differs (exit $ra/$rb)"; return 1; fi
    if cmp -s "$a.out" "$b.out"; then echo "identical (exit $ra)"; return 0; fi
    diff -u "$a.out" "$b.out" > "$logs/$1.$2.diff"
    if [ "$(mask "$a.out")" = "$(mask "$b.out")" ]; then echo "same shape (exit $ra)"; return 0; fi
    case $1 in smi_q*)
        private_rows "$a.out" > "$a.pub"; private_rows "$b.out" > "$b.pub"
        if [ "$(mask "$a.pub")" = "$(mask "$b.pub")" ]; then
            echo "same shape (exit $ra), private rows aside"; return 0
        fi ;;
    esac
    echo "differs (exit $ra), $(grep -c '^[-+][^-+]' "$logs/$1.$2.diff") lines"
    return 1
}

# pynvml: installed, or nvidia-ml-py's wheel carried in .whl/ (a pure Python
# wheel imports from the zip itself)
if ! python3 -c 'import pynvml' 2>/dev/null; then
    pw=$(ls "$root"/.whl/nvidia_ml_py-*.whl 2>/dev/null | head -n 1)
    [ -n "$pw" ] && PYTHONPATH=$pw${PYTHONPATH:+:$PYTHONPATH} && export PYTHONPATH
fi

fails=0
table=$logs/table.txt
{
    echo "# NVML through apigen: $gpu, driver $driver, $(date -u '+%Y-%m-%d %H:%M UTC')"
    printf '%-58s | %-28s | %-28s | %-28s\n' command unix tcp shm
    printf '%s\n' "-----------------------------------------------------------+------------------------------+------------------------------+-----------------------------"
} > "$table"
row() { # TAG LABEL STRICT CMD...
    tag=$1 label=$2 strict=$3; shift 3
    run "$tag" native "$@"
    line=$(printf '%-58s' "$label")
    for m in unix tcp shm; do
        run "$tag" "$m" "$@"
        v=$(verdict "$tag" "$m") || { [ "$strict" = 1 ] && fails=$((fails + 1)); }
        # identical only (STRICT=2): nothing in it changes from one moment to the next
        case $v in identical*) ;; *) [ "$strict" = 2 ] && fails=$((fails + 1)) && v="$v, not identical" ;; esac
        line="$line | $(printf '%-28s' "$v")"
    done
    echo "$line" >> "$table"
}
row query "nvml_query" 1 "$query"
if python3 -c 'import pynvml' 2>/dev/null; then
    row pynvml "pynvml_query.py" 1 python3 examples/nvml/pynvml_query.py
else
    echo "pynvml_query.py: pynvml is not installed (pip install nvidia-ml-py)" >> "$table"
fi
if command -v nvidia-smi >/dev/null 2>&1; then
    smi=$(command -v nvidia-smi)
    row smi "nvidia-smi" 1 "$smi"
    row smi_L "nvidia-smi -L" 2 "$smi" -L
    row smi_q "nvidia-smi -q" 1 "$smi" -q
    row smi_qd "nvidia-smi -q -d MEMORY,UTILIZATION,CLOCK,POWER,TEMPERATURE" 1 "$smi" -q -d MEMORY,UTILIZATION,CLOCK,POWER,TEMPERATURE
    row smi_csv "nvidia-smi --query-gpu=name,uuid,memory.* --format=csv" 1 \
        "$smi" --query-gpu=name,uuid,memory.total,memory.used,utilization.gpu --format=csv
    row smi_topo "nvidia-smi topo -m" 1 "$smi" topo -m
    # without the private table (the stub's former answer): reported, not judged
    APIGEN_NVML_EXPORT_TABLE=none run smi_none unix "$smi"
    cp "$logs/smi.native.out" "$logs/smi_none.native.out"; cp "$logs/smi.native.rc" "$logs/smi_none.native.rc"
    printf '%-58s | %-28s\n' "nvidia-smi, APIGEN_NVML_EXPORT_TABLE=none" "$(verdict smi_none unix)" >> "$table"
    # the probe experiment: the table's entries log once and refuse
    # (specs/nvml/probe.c): which ones nvidia-smi -q calls, and what it prints
    APIGEN_NVML_EXPORT_TABLE=probe run smi_probe unix "$smi" -q
    cp "$logs/smi_q.native.out" "$logs/smi_probe.native.out"; cp "$logs/smi_q.native.rc" "$logs/smi_probe.native.rc"
    printf '%-58s | %-28s\n' "nvidia-smi -q, APIGEN_NVML_EXPORT_TABLE=probe" "$(verdict smi_probe unix)" >> "$table"
    # every call of nvidia-smi -q through the stub, with its result
    rm -f "$logs/smi_q.trace"
    APIGEN_TRACE=$logs/smi_q.trace APIGEN_SERVER=$(url_of unix) LD_LIBRARY_PATH="$stub" \
        timeout 120 "$smi" -q > /dev/null 2>&1
    # which libnvidia-ml.so.1 did it load with LD_LIBRARY_PATH at the stub?
    APIGEN_SERVER=$(url_of unix) LD_LIBRARY_PATH="$stub" LD_DEBUG=libs "$smi" -L 2>&1 > /dev/null |
        grep -E 'libnvidia-ml|error' > "$logs/smi.ld_libs.txt"
    loaded=$(grep -E 'calling init: .*libnvidia-ml' "$logs/smi.ld_libs.txt" | sed 's/.*calling init: //' | sort -u | tr '\n' ' ')
    echo "nvidia-smi with LD_LIBRARY_PATH=$stub loaded: ${loaded:-(no libnvidia-ml init seen: see smi.ld_libs.txt)}" >> "$table"
    # the names it looks up (dlsym) that the stub lacks
    # (only the nvml names: the whole LD_DEBUG output is megabytes)
    APIGEN_SERVER=$(url_of unix) LD_LIBRARY_PATH="$stub" LD_DEBUG=symbols "$smi" -q 2>&1 > /dev/null |
        sed -n 's/.*symbol=\(nvml[A-Za-z0-9_]*\);.*/\1/p' | sort -u > "$logs/smi.ld_symbols.txt"
else
    echo "nvidia-smi: not found" >> "$table"
fi
if python3 -c 'import pynvml' 2>/dev/null; then
    APIGEN_SERVER=$(url_of unix) LD_LIBRARY_PATH="$stub" LD_DEBUG=symbols python3 examples/nvml/pynvml_query.py 2>&1 > /dev/null |
        sed -n 's/.*symbol=\(nvml[A-Za-z0-9_]*\);.*/\1/p' | sort -u > "$logs/pynvml.ld_symbols.txt"
fi
cat "$logs"/*.ld_symbols.txt 2>/dev/null | sort -u > "$logs/looked_up.txt"
comm -23 "$logs/looked_up.txt" "$logs/stub.exports" > "$logs/looked_up_missing.txt"
{
    echo
    echo "nvml names looked up by nvidia-smi/pynvml that the stub does not export: $(wc -l < "$logs/looked_up_missing.txt")"
    sed 's/^/  /' "$logs/looked_up_missing.txt"
    echo "unsupported calls the stub logged (once each, by name):"
    cat "$logs"/*.unix.err "$logs"/*.tcp.err "$logs"/*.shm.err 2>/dev/null | grep 'not supported' | sed 's/^apigen\[[^]]*\]: //' | sort -u | sed 's/^/  /'
    if [ -f "$logs/smi_q.trace" ]; then
        echo "nvidia-smi -q's calls through the stub: $(grep -c ') = ' "$logs/smi_q.trace") (smi_q.trace); NVML_ERROR_UNINITIALIZED answers (none expected after nvmlInit):"
        sed -n 's/^apigen\[[^]]*\] trace: \(nvml[A-Za-z0-9_]*\)(.*) = 1 \[.*/\1/p' "$logs/smi_q.trace" | sort | uniq -c | sed 's/^/  /'
    fi
    if [ -f "$logs/smi_probe.unix.err" ]; then
        echo "private table entries nvidia-smi -q called (probe; in call order, byte offset = 8 x entry):"
        sed -n 's/.*probe: entry \([0-9]*\) .*/\1/p' "$logs/smi_probe.unix.err" | tr '\n' ' ' | sed 's/^/  /; s/$/\n/'
    fi
    echo "calls the server refused (privileged, no --allow-gpu-admin):"
    cat "$logs"/server*.log | grep 'refused:' | sed 's/^apigen\[[^]]*\]: //' | sort -u | sed 's/^/  /'
    grep -v '^#' "$logs/libnvidia-ml.exports" | comm -23 - "$logs/stub.exports" > "$logs/private_symbols.txt"
    echo "real library exports the stub lacks (declared in no nvml.h; for specs/nvml.yaml's api.private_symbols): $(wc -l < "$logs/private_symbols.txt")"
    sed 's/^/  /' "$logs/private_symbols.txt"
} >> "$table"
cat "$table"
echo "logs: $logs (diffs: *.diff; commit $logs/libnvidia-ml.exports as tests/nvml/libnvidia-ml.exports)"
# the processes section: a guest CUDA program holding memory while nvidia-smi
# and procs.c list the GPU's processes through the stub (tests/gpu/nvml-procs.sh;
# PROCS=0 skips it)
if [ "${PROCS:-1}" = 1 ]; then
    kill "$spid" "$spid2" 2>/dev/null; wait "$spid" "$spid2" 2>/dev/null
    echo "== processes (tests/gpu/nvml-procs.sh)"
    BUILD=$build NVML_INCLUDE=$inc sh tests/gpu/nvml-procs.sh || fails=$((fails + 1))
fi
[ $fails = 0 ]
