#!/usr/bin/env bash
# OpenCL forwarded end to end on the system's OpenCL (PoCL in CI).
#   opencl_e2e.sh MODE BUILD_DIR [ARG]
# MODE:
#   diff PROGRAM unix|tcp|shm|ucx|tls run examples/opencl PROGRAM natively and through the
#                           stub (server over unix or tcp); outputs must be identical
#   clinfo                  clinfo natively and through the stub, line by line; only
#                           the ICD loader lines (they name the library) may differ
#   forged                  forged / foreign handle values: the OpenCL error, the
#                           server survives (forwarded only: natively UB)
#   exports                 the stub exports exactly ocl-icd's symbols and versions
#   load unix|tcp|shm       ocl_conform load: issue 20's checks from 3 threads at once,
#                           natively and forwarded, same output
#   icd_clinfo              the ICD driver build next to PoCL under the system's ICD
#                           loader (OCL_ICD_VENDORS): clinfo lists both platforms
#   icd PROGRAM             PROGRAM natively (PoCL's .icd alone) and on the remote
#                           platform through the loader (OCL_PLATFORM=APIGEN):
#                           identical output, and the driver forwarded the calls
# The server runs with no LD_LIBRARY_PATH: it uses the real libOpenCL.
set -u
MODE=${1:?usage: opencl_e2e.sh MODE BUILD_DIR [ARG...]}
B=${2:?}
STUB=$B/stub-opencl
# OCL_E2E_SERVER: another build's server (scripts/test-all.sh's ASan stage runs
# the SVM tests' guests, sanitized, against the plain build's server)
SERVER=${OCL_E2E_SERVER:-$B/examples/opencl/apigen-server-opencl}
EX=$B/examples/opencl
TMP=$(mktemp -d "${TMPDIR:-/tmp}/apigen-ocl.XXXXXX")
SPID=
cleanup() {
    if [ -n "$SPID" ]; then
        kill "$SPID" 2>/dev/null
        wait "$SPID" 2>/dev/null
    fi
    rm -rf "$TMP"
}
trap cleanup EXIT
export POCL_CACHE_DIR=$TMP/pocl-cache
# Native runs are PoCL's alone (no apigen code: the forwarded run of the
# same program keeps the leak check): no LeakSanitizer exit check there. Its
# tracer crashed ("Tracer caught signal 11") in every native ocl_vecadd whose
# PoCL compiled into a cache folder of 30 or more characters (Debian 12, PoCL
# 3.1, GCC 12's ASan, 2026-11-28).
native_run() { ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" "$@"; }
# PoCL sizes its global memory from the memory free when it starts, so two
# clinfo runs under load report different sizes: the clinfo modes pin it
# (POCL_MEMORY_LIMIT) for the native run and the server alike. Only there:
# with the limit, PoCL manages memory in a way that makes an ASan-built
# program abort in ASan's own unmap.
pin_pocl_memory() { export POCL_MEMORY_LIMIT=${POCL_MEMORY_LIMIT:-4}; }

start_server() { # unix|tcp|shm|ucx|tls -> sets URL
    local url args=
    if [ "$1" = tls ]; then # throwaway certificates; the guest trusts their CA
        "$(dirname "$0")/../security/tls_certs.sh" "$TMP/certs" >"$TMP/certs.log" 2>&1
        case $? in 0) ;; 77) cat "$TMP/certs.log"; exit 77 ;; *) cat "$TMP/certs.log"; exit 1 ;; esac
        export APIGEN_TLS_CA=$TMP/certs/ca.pem
        url=tls://127.0.0.1:0
        args="--tls-cert $TMP/certs/server.pem --tls-key $TMP/certs/server.key"
    elif [ "$1" = ucx ]; then # a UCX endpoint cannot be handed to a session process
        url=ucx://127.0.0.1:0 # the kernel picks a free port (a chosen one may be taken)
        args="--isolation thread"
    elif [ "$1" = tcp ]; then
        url=tcp://127.0.0.1:0 # the kernel picks a free port; the server names it
    elif [ "$1" = shm ]; then
        url=shm://apigen-ocl-$$
    else
        url=unix://$TMP/ocl.sock
    fi
    # shellcheck disable=SC2086 # args: options split on spaces
    env -u LD_LIBRARY_PATH "$SERVER" --listen "$url" $args >"$TMP/server.log" 2>&1 &
    SPID=$!
    # 20 s: a sanitized server on a loaded machine starts in seconds
    for _ in $(seq 400); do
        grep -q listening "$TMP/server.log" && break
        kill -0 "$SPID" 2>/dev/null || break
        sleep 0.05
    done
    URL=$url
    case $1 in tcp|tls|ucx) URL=$(sed -n 's/.*listening on \([a-z]*:[^ ]*\) .*/\1/p' "$TMP/server.log" | head -1) ;; esac
    grep -q "no TLS support" "$TMP/server.log" && { echo "SKIP: this build has no TLS"; exit 77; }
    grep -q listening "$TMP/server.log" || { echo "FAIL: the server did not start on $url"; cat "$TMP/server.log"; exit 1; }
    return 0
}

fwd() { APIGEN_SERVER=$URL LD_LIBRARY_PATH=$STUB APIGEN_TIMEOUT_MS=60000 "$@"; }

# ICD driver: a vendors folder with the system's PoCL .icd, one with apigen's too
ICD=$B/stub-opencl-icd/vendors/apigen.icd
icd_setup() {
    POCL_ICD=$(grep -l -i pocl /etc/OpenCL/vendors/*.icd 2>/dev/null | head -1)
    [ -n "$POCL_ICD" ] || { echo "SKIP: no PoCL .icd in /etc/OpenCL/vendors"; exit 77; }
    [ -f "$ICD" ] || { echo "FAIL: $ICD is missing (target opencl_icd)"; exit 1; }
    mkdir -p "$TMP/native-vendors" "$TMP/vendors"
    cp "$POCL_ICD" "$TMP/native-vendors/"
    cp "$POCL_ICD" "$ICD" "$TMP/vendors/"
}
native_icd() { env -u LD_LIBRARY_PATH OCL_ICD_VENDORS=$TMP/native-vendors "$@"; }
remote_icd() {
    env -u LD_LIBRARY_PATH OCL_ICD_VENDORS=$TMP/vendors APIGEN_SERVER=$URL \
        APIGEN_TIMEOUT_MS=60000 "$@"
}

case $MODE in
diff)
    PROG=${3:?program}
    T=${4:-unix}
    native_run "$EX/ocl_$PROG" >"$TMP/native" 2>"$TMP/native.err"
    nrc=$?
    start_server "$T"
    fwd "$EX/ocl_$PROG" >"$TMP/fwd" 2>"$TMP/fwd.err"
    frc=$?
    if [ $nrc != $frc ] || ! diff -u "$TMP/native" "$TMP/fwd"; then
        echo "FAIL: ocl_$PROG natively (rc $nrc) and forwarded over $T (rc $frc) differ"
        cat "$TMP/fwd.err" "$TMP/server.log"
        exit 1
    fi
    kill -0 "$SPID" 2>/dev/null || { echo "FAIL: the server died"; cat "$TMP/server.log"; exit 1; }
    # identical failures are no pass: every example succeeds on PoCL
    [ $nrc = 0 ] || { echo "FAIL: ocl_$PROG failed natively (rc $nrc), the same way forwarded"; cat "$TMP/native.err"; exit 1; }
    echo "PASS: ocl_$PROG identical natively and over $T ($(wc -l <"$TMP/fwd") lines)"
    ;;
load)
    # ocl_conform load: N threads at once, natively and forwarded; each passes
    T=${3:-unix}
    native_run "$EX/ocl_conform" load 3 >"$TMP/native" 2>&1 || { echo "FAIL: natively"; cat "$TMP/native"; exit 1; }
    start_server "$T"
    fwd "$EX/ocl_conform" load 3 >"$TMP/fwd" 2>&1
    frc=$?
    if [ $frc != 0 ] || ! diff -u "$TMP/native" "$TMP/fwd"; then
        echo "FAIL: ocl_conform load forwarded over $T (rc $frc)"
        cat "$TMP/fwd" "$TMP/server.log"
        exit 1
    fi
    kill -0 "$SPID" 2>/dev/null || { echo "FAIL: the server died"; cat "$TMP/server.log"; exit 1; }
    echo "PASS: $(cat "$TMP/fwd")"
    ;;
clinfo)
    command -v clinfo >/dev/null || { echo "SKIP: clinfo is not installed"; exit 77; }
    pin_pocl_memory
    clinfo >"$TMP/native" 2>&1
    start_server unix
    fwd clinfo >"$TMP/fwd" 2>&1
    # lines that name the library: the ICD loader's name, vendor and version
    filt() { grep -v -E '^ *ICD loader (Name|Vendor|Version) ' "$1"; }
    if ! diff -u <(filt "$TMP/native") <(filt "$TMP/fwd"); then
        echo "FAIL: clinfo through the stub differs"
        exit 1
    fi
    n=$(diff <(cat "$TMP/native") <(cat "$TMP/fwd") | grep -c '^<')
    echo "PASS: clinfo identical ($(wc -l <"$TMP/fwd") lines; $n ICD loader lines name the library)"
    ;;
forged)
    start_server unix
    fwd "$EX/ocl_badinput" forged >"$TMP/fwd" 2>"$TMP/fwd.err"
    cat >"$TMP/want" <<'W'
clGetMemObjectInfo(forged, CL_MEM_SIZE, sizeof sz, &sz, NULL) = -38
clReleaseMemObject(forged)                                   = -38
clGetKernelInfo(fk, CL_KERNEL_NUM_ARGS, sizeof sz, &sz, NULL) = -48
clSetKernelArg(k, 0, sizeof forged, &forged)                 = -38
clEnqueueReadBuffer(q, forged, CL_TRUE, 0, 4, host, 0, NULL, NULL) = -38
clWaitForEvents(1, &fe)                                      = -58
clSetKernelArg(k2, 0, sizeof forged, &forged)                = -38
clSetKernelArg(k2, 0, sizeof img, &img)                      = -38
clSetKernelArg(k2, 0, sizeof smp, &smp)                      = -38
clSetKernelArg(k2, 1, sizeof v, &v)                          = 0
clSetKernelArg(k2, 2, sizeof nosmp, &nosmp)                  = -41
clSetKernelArg(k2, 2, sizeof forged, &forged)                = -41
clSetKernelArg(k2, 2, 4, &v)                                 = -51
clSetKernelArg(k2, 3, sizeof nomem, &nomem)                  = -38
clSetKernelArg(k2, 3, sizeof buf, &buf)                      = -38
clSetKernelArg(k2, 3, sizeof forged, &forged)                = -38
clSetKernelArg(k2, 4, sizeof forged, &forged)                = -50
clSetKernelArg(k2, 0, sizeof buf, &buf)                      = 0
clSetKernelArg(k2, 1, sizeof v, &v)                          = 0
clSetKernelArg(k2, 2, sizeof smp, &smp)                      = 0
clSetKernelArg(k2, 3, sizeof img, &img)                      = 0
clSetKernelArg(k2, 4, 16, NULL)                              = 0
clEnqueueNDRangeKernel(q, k2, 1, NULL, &g, NULL, 0, NULL, NULL) = 0
k2 wrote 42
clSetKernelArgSVMPointer(k, 0, (void *)(uintptr_t)0x4141414141ull) = -50
clEnqueueSVMMemFill(q, host, &fill, sizeof fill, 16, 0, NULL, NULL) = -30
clSetKernelExecInfo(k, CL_KERNEL_EXEC_INFO_SVM_PTRS, sizeof fp, fp) = -30
W
    diff -u "$TMP/want" "$TMP/fwd" || { echo "FAIL: forged handles"; cat "$TMP/fwd.err"; exit 1; }
    kill -0 "$SPID" 2>/dev/null || { echo "FAIL: the server died"; exit 1; }
    echo "PASS: forged handles give OpenCL's invalid-object errors; the server lives"
    ;;
exports)
    REAL=$(ldconfig -p | awk '/libOpenCL.so.1 .*x86-64/ {print $NF; exit}')
    [ -n "$REAL" ] || { echo "SKIP: no system libOpenCL.so.1"; exit 77; }
    syms() { objdump -T "$1" | awk '$4 == ".text" {print $(NF-1), $NF}' | sort; }
    if ! diff -u <(syms "$REAL") <(syms "$STUB/libOpenCL.so.1"); then
        echo "FAIL: the stub's exports differ from $REAL"
        exit 1
    fi
    echo "PASS: $(syms "$REAL" | wc -l) symbols, same version nodes as $REAL"
    ;;
icd_clinfo)
    command -v clinfo >/dev/null || { echo "SKIP: clinfo is not installed"; exit 77; }
    pin_pocl_memory
    icd_setup
    # clinfo is not instrumented: a sanitizer runtime would only come with the
    # driver's dlopen, which ASan does not support
    if ldd "$(head -1 "$ICD")" 2>/dev/null | grep -q -E 'lib(asan|ubsan)'; then
        echo "SKIP: the driver is built with sanitizers; clinfo would dlopen their runtime"
        exit 77
    fi
    start_server unix
    native_icd clinfo -l >"$TMP/native" 2>&1
    remote_icd clinfo -l >"$TMP/list" 2>&1 || { echo "FAIL: clinfo -l"; cat "$TMP/list"; exit 1; }
    remote_icd clinfo >"$TMP/full" 2>&1 || { echo "FAIL: clinfo"; tail "$TMP/full"; exit 1; }
    cat "$TMP/list"
    nn=$(grep -c '^Platform #' "$TMP/native")
    nr=$(grep -c '^Platform #' "$TMP/list")
    [ "$nr" = $((nn + 1)) ] || { echo "FAIL: $nr platforms with the driver, $nn without"; exit 1; }
    grep -q -E 'Platform Extensions function suffix +APIGEN' "$TMP/full" ||
        { echo "FAIL: no platform with the suffix APIGEN in clinfo"; exit 1; }
    # with no server named the driver has no platform, and costs nothing
    env -u LD_LIBRARY_PATH -u APIGEN_SERVER OCL_ICD_VENDORS=$TMP/vendors clinfo -l >"$TMP/none" 2>&1
    diff -u "$TMP/native" "$TMP/none" || { echo "FAIL: without APIGEN_SERVER"; exit 1; }
    kill -0 "$SPID" 2>/dev/null || { echo "FAIL: the server died"; cat "$TMP/server.log"; exit 1; }
    echo "PASS: clinfo lists $nr platforms, the remote one with suffix APIGEN"
    ;;
icd)
    PROG=${3:?program}
    icd_setup
    native_run native_icd "$EX/ocl_$PROG" >"$TMP/native" 2>"$TMP/native.err"
    nrc=$?
    start_server unix
    remote_icd OCL_PLATFORM=APIGEN APIGEN_TRACE=$TMP/trace "$EX/ocl_$PROG" >"$TMP/fwd" 2>"$TMP/fwd.err"
    frc=$?
    if [ $nrc != $frc ] || ! diff -u "$TMP/native" "$TMP/fwd"; then
        echo "FAIL: ocl_$PROG natively (rc $nrc) and through the ICD driver (rc $frc) differ"
        cat "$TMP/fwd.err" "$TMP/server.log"
        exit 1
    fi
    n=$(grep -c 'clEnqueue' "$TMP/trace" 2>/dev/null)
    [ "${n:-0}" -gt 0 ] || { echo "FAIL: the driver forwarded no enqueue"; exit 1; }
    kill -0 "$SPID" 2>/dev/null || { echo "FAIL: the server died"; cat "$TMP/server.log"; exit 1; }
    [ $nrc = 0 ] || { echo "FAIL: ocl_$PROG failed natively (rc $nrc), the same way through the ICD driver"; exit 1; }
    echo "PASS: ocl_$PROG identical natively and through the ICD driver ($n enqueues forwarded)"
    ;;
*)
    echo "unknown mode $MODE"
    exit 2
    ;;
esac
