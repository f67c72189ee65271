#!/bin/sh
# tests/gpu/driver11.sh: the driver stub and server generated from CUDA 11.x
# headers (docs/upgrading.md, "The driver API on CUDA 11.x") on a machine
# with an NVIDIA GPU, against the same program natively. Two steps, since the
# GPU machine may have neither apigen's generator (libclang) nor the
# network for NVIDIA's 11.x wheels:
#
#   sh tests/gpu/driver11.sh prepare     (here: build/gen/apigen and the wheel
#        cache of scripts/cuda-versions.sh; writes build-cuda11/V/{gen,include}
#        for each V of VERSIONS, default "11.7 11.8")
#   sh tests/gpu/driver11.sh             (on the GPU machine, build-cuda11
#        carried: builds the runtime libraries, for each V the stub
#        (libcuda.so.1) and apigen-server-cuda from build-cuda11/V over the
#        machine's driver, the PTX of tests/cuda/driver/kernels.cu with nvcc,
#        tests/gpu/driver11.c and tests/cuda/driver/driver_memory.c against
#        V's headers; runs each natively and over unix, tcp and shm, and
#        compares stdout and exit status)
#
# Prints a table; logs go to $OUT when set. Environment: VERSIONS, BUILD
# (default build-gpu-cuda11), APIGEN_WHEEL_CACHE (prepare), KEEP=1.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 1
versions=${VERSIONS:-11.7 11.8}
pre=$root/build-cuda11

if [ "${1:-}" = prepare ]; then
    cache=${APIGEN_WHEEL_CACHE:-$HOME/.cache/apigen-cuda-wheels}
    [ -x build/gen/apigen ] || { echo "driver11.sh prepare: build/gen/apigen not built"; exit 1; }
    for v in $versions; do
        # the version's headers (cudaProfiler.h included) as the CI matrix takes them
        APIGEN_PREPARE_ONLY=1 sh scripts/cuda-driver-versions.sh build/gen/apigen \
            build/runtime/libapigen_guest.a build/transports/libapigen_transport.a "$v" >/dev/null 2>&1
        [ -f "$cache/v$v/include/cudaProfiler.h" ] ||
            { echo "driver11.sh prepare: no headers of $v in $cache (run cuda.driver_versions.$v once)"; exit 1; }
        rm -rf "$pre/$v" && mkdir -p "$pre/$v" && cp -r "$cache/v$v/include" "$pre/$v/include" || exit 1
        build/gen/apigen specs/cuda.yaml -I "$pre/$v/include" -o "$pre/$v/gen" --undecided-unsupported \
            >/dev/null 2>"$pre/$v/apigen.err" || { cat "$pre/$v/apigen.err"; exit 1; }
        echo "prepared $pre/$v"
    done
    echo "now carry build-cuda11 and run: sh tests/gpu/driver11.sh"
    exit 0
fi

build=${BUILD:-build-gpu-cuda11}
case $build in /*) ;; *) build=$root/$build ;; esac
if [ -z "${CUDA_HOME:-}" ]; then
    if command -v nvcc >/dev/null 2>&1; then CUDA_HOME=$(dirname "$(dirname "$(command -v nvcc)")")
    else CUDA_HOME=/usr/local/cuda; fi
fi
export PATH="$CUDA_HOME/bin:$PATH"
command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L
mkdir -p "$build"
echo "== runtime libraries ($build)"
cmake -S . -B "$build" -DAPIGEN_BUILD_GENERATOR=OFF -DCMAKE_BUILD_TYPE=Release \
      -DCUDAToolkit_ROOT="$CUDA_HOME" > "$build/configure.log" 2>&1 || { cat "$build/configure.log"; exit 1; }
cmake --build "$build" -j"$(nproc)" --target apigen_guest apigen_transport apigen_host \
      > "$build/build.log" 2>&1 || { tail -n 30 "$build/build.log"; exit 1; }
guest_lib=$build/runtime/libapigen_guest.a
host_lib=$build/runtime/libapigen_host.a
tp_libs=$build/transports/libapigen_transport.a
if nm "$tp_libs" 2>/dev/null | grep -q ' U SSL_'; then tp_libs="$tp_libs -lssl -lcrypto"; fi
nvcc -ptx -arch=compute_75 -o "$build/kernels.ptx" tests/cuda/driver/kernels.cu > "$build/ptx.log" 2>&1 ||
    { cat "$build/ptx.log"; exit 1; }
S=specs/cuda
guest_srcs=$(sed -n 's/^  sources: \[\(.*\)\]$/\1/p' specs/cuda.yaml | tr -d ' ' | tr ',' ' ' | sed 's|cuda/||g')
host_srcs="host.c host_fn.c host_copy.c host_capture.c host_arena.c host_shareable.c host_private.c host_spans.c"
strict="-Werror=implicit-function-declaration -Wno-deprecated-declarations"

logs=$(mktemp -d "${TMPDIR:-/tmp}/apigen-driver11.XXXXXX")
table=$logs/table.txt
fails=0
printf '%-22s | %-8s | %-8s | %-8s | %-8s | %s\n' case native unix tcp shm result > "$table"
pids=""
cleanup() {
    for p in $pids; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
    if [ -n "${OUT:-}" ]; then mkdir -p "$OUT/driver11-logs"; cp -r "$logs"/. "$OUT/driver11-logs/"; fi
    [ "${KEEP:-0}" = 1 ] && echo "logs: $logs" || rm -rf "$logs"
}
trap cleanup EXIT INT TERM

for v in $versions; do
    d=$pre/$v
    [ -d "$d/gen" ] && [ -d "$d/include" ] ||
        { echo "driver11.sh: no $d (run 'sh tests/gpu/driver11.sh prepare' where apigen is built)"; exit 1; }
    w=$build/v$v
    mkdir -p "$w/stub"
    echo "== CUDA $v: stub, server, programs"
    srcs=""
    for f in $guest_srcs; do srcs="$srcs $S/$f"; done
    hs=""
    for f in $host_srcs; do hs="$hs $S/$f"; done
    # shellcheck disable=SC2086
    cc -std=c11 -O2 -fPIC -shared -fvisibility=hidden $strict -o "$w/stub/libcuda.so.1" \
        -I "$d/gen" -I "$d/include" -I "$S" -I runtime "$d/gen/cuda_stub.c" $srcs \
        "$guest_lib" $tp_libs -lpthread -Wl,-soname,libcuda.so.1 \
        -Wl,--version-script="$d/gen/cuda.map" -Wl,-z,defs > "$w/stub.log" 2>&1 ||
        { grep -m 20 -E 'error:|undefined' "$w/stub.log"; fails=$((fails + 1)); continue; }
    # shellcheck disable=SC2086
    cc -std=c11 -O2 $strict -o "$w/apigen-server-cuda" \
        -I "$d/gen" -I "$d/include" -I "$S" -I runtime -I transports \
        "$d/gen/cuda_server.c" "$d/gen/cuda_server_main.c" $hs \
        "$host_lib" -L "$CUDA_HOME/lib64/stubs" -lcuda $tp_libs -lpthread -ldl -lrt > "$w/server.log" 2>&1 ||
        { grep -m 20 -E 'error:|undefined' "$w/server.log"; fails=$((fails + 1)); continue; }
    for p in tests/gpu/driver11.c tests/cuda/driver/driver_memory.c; do
        b=$(basename "$p" .c)
        cc -std=c11 -O2 -o "$w/$b" -I "$d/include" "$p" -L "$CUDA_HOME/lib64/stubs" -lcuda > "$w/$b.log" 2>&1 ||
            { cat "$w/$b.log"; fails=$((fails + 1)); }
    done
    # a port per version: the earlier version's servers still listen
    port=$(( 30000 + ($$ % 20000) + $(echo "$v" | tr -d .) % 97 ))
    shmname=apigen-driver11-$$-$(echo "$v" | tr . _)
    "$w/apigen-server-cuda" --listen "unix://$logs/$v.sock" --listen "tcp://127.0.0.1:$port" \
        > "$logs/$v.server.log" 2>&1 &
    s1=$!
    "$w/apigen-server-cuda" --listen "shm://$shmname" > "$logs/$v.server-shm.log" 2>&1 &
    s2=$!
    pids="$pids $s1 $s2"
    i=0
    while [ $i -lt 100 ] && ! { grep -q listening "$logs/$v.server.log" && grep -q listening "$logs/$v.server-shm.log"; } 2>/dev/null; do
        sleep 0.05; i=$((i + 1))
    done
    for b in driver11 driver_memory; do
        [ -x "$w/$b" ] || continue
        key=$v.$b
        timeout 300 "$w/$b" "$build/kernels.ptx" > "$logs/$key.native.out" 2> "$logs/$key.native.err"
        echo $? > "$logs/$key.native.rc"
        for m in unix tcp shm; do
            case $m in
            unix) srv="unix://$logs/$v.sock" ;;
            tcp) srv="tcp://127.0.0.1:$port" ;;
            shm) srv="shm://$shmname" ;;
            esac
            env APIGEN_SERVER="$srv" LD_LIBRARY_PATH="$w/stub" timeout 300 "$w/$b" "$build/kernels.ptx" \
                > "$logs/$key.$m.out" 2> "$logs/$key.$m.err"
            echo $? > "$logs/$key.$m.rc"
        done
        res=identical why=
        for m in unix tcp shm; do
            if [ "$(cat "$logs/$key.$m.rc")" != "$(cat "$logs/$key.native.rc")" ] ||
               ! cmp -s "$logs/$key.native.out" "$logs/$key.$m.out"; then
                res=DIFFERS
                [ -z "$why" ] && why="$m: $(diff "$logs/$key.native.out" "$logs/$key.$m.out" | grep -m1 '^[<>]' | cut -c1-100)"
            fi
        done
        [ "$res" = identical ] || fails=$((fails + 1))
        printf '%-22s | rc %-5s | rc %-5s | rc %-5s | rc %-5s | %s %s\n' "$key" \
            "$(cat "$logs/$key.native.rc")" "$(cat "$logs/$key.unix.rc")" "$(cat "$logs/$key.tcp.rc")" \
            "$(cat "$logs/$key.shm.rc")" "$res" "$why" >> "$table"
    done
done
cat "$table"
echo "native output of the first version:"
sed 's/^/  /' "$logs/$(echo "$versions" | cut -d' ' -f1).driver11.native.out" 2>/dev/null
[ "$fails" = 0 ] && echo "driver11.sh: all identical" || echo "driver11.sh: $fails failure(s)"
[ "$fails" = 0 ]
