#!/usr/bin/env bash
# The whole test suite three ways (scripts/test.sh is the plain stage alone):
#   1. plain build (BUILD_DIR, default build/): every ctest test, valgrind included
#   2. ASan + UBSan build (ASAN_BUILD, default build-asan/): every ctest test
#      again except the valgrind and benchmark ones
#   3. clang + libFuzzer build (FUZZ_BUILD, default build-fuzz/): each fuzz
#      target for FUZZ_SECONDS in all (default 60), corpus kept in FUZZ_BUILD
#
#   scripts/test-all.sh [plain|asan|fuzz]...     (default: all three, in order)
#
# Environment: BUILD_DIR, JOBS (parallel builds and tests, default nproc), FUZZ_SECONDS,
# CMAKE_ARGS (extra configure arguments for every build). Exit status: 0 when
# every stage passed; the first failing stage's status otherwise (later
# stages still run, so one CI run shows everything).
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
JOBS=${JOBS:-$(nproc)}
BUILD=${BUILD_DIR:-build}
ASAN_BUILD=${ASAN_BUILD:-build-asan}
FUZZ_BUILD=${FUZZ_BUILD:-build-fuzz}
FUZZ_SECONDS=${FUZZ_SECONDS:-60}
# The default generator, as scripts/test.sh uses: one build dir serves both.
STAGES=("$@")
[ ${#STAGES[@]} -eq 0 ] && STAGES=(plain asan fuzz)
RC=0

stage() { echo; echo "==== $* ===="; }
note_fail() { echo "FAILED: $1"; [ "$RC" = 0 ] && RC=${2:-1}; }

configure_build() { # dir args...
    local dir=$1
    shift
    # shellcheck disable=SC2086
    cmake -S . -B "$dir" ${CMAKE_ARGS:-} "$@" >"$dir.configure.log" 2>&1 ||
        { cat "$dir.configure.log"; return 1; }
    cmake --build "$dir" -j "$JOBS"
}

run_plain() {
    stage "plain build and tests ($BUILD)"
    configure_build "$BUILD" || { note_fail "plain build"; return; }
    ctest --test-dir "$BUILD" -j "$JOBS" --output-on-failure -LE bench || note_fail "plain tests"
}

run_asan() {
    stage "AddressSanitizer + UndefinedBehaviorSanitizer build and tests ($ASAN_BUILD)"
    configure_build "$ASAN_BUILD" -DAPIGEN_SANITIZE=address,undefined -DCMAKE_BUILD_TYPE=Debug ||
        { note_fail "asan build"; return; }
    # LeakSanitizer is on; libclang (apigen's front end) keeps caches at exit,
    # so leaks are reported for the runtime, stubs, servers and tests, not
    # for apigen itself (suppressions below).
    # verify_asan_link_order=0: instrumented stubs are loaded into programs
    # that are not (clinfo, prebuilt CUDA samples). unit.runtime forks with
    # threads running, which deadlocks LeakSanitizer's exit check in the
    # child: it runs alone, without leak detection.
    # use_sigaltstack=0: LLVM inside PoCL installs a malloc'ed alternate signal
    # stack on a thread that compiles a program, which ASan would munmap when
    # that thread exits ("unable to unmap"; it made parallel OpenCL runs abort).
    local supp=$ROOT/scripts/lsan.supp
    local asan=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:strict_string_checks=1:verify_asan_link_order=0:use_sigaltstack=0}
    export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
    export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$supp:print_suppressions=0}
    # UCX's memory-event hooks (it patches mmap/munmap) crash LeakSanitizer's
    # exit check ("Tracer caught signal 11"): off here, where ucx:// runs on
    # loopback (no RDMA registration cache to keep right); UCX's own leaks are
    # in lsan.supp.
    export UCX_MEM_EVENTS=${UCX_MEM_EVENTS:-no}
    # OpenCL and ucx:// tests now run in parallel with the rest. One limit of
    # the sanitizer, not of apigen: GCC's ASan allocator is not fork-safe, so
    # a session process forked while another server thread allocates can
    # block forever; security.load.opencl (several sessions starting at once)
    # runs its sanitized server with --isolation thread (tests/security/sec_ocl.sh).
    ASAN_OPTIONS=$asan ctest --test-dir "$ASAN_BUILD" -j "$JOBS" --output-on-failure \
        -LE "bench|valgrind" -E '^unit\.runtime$|\.svm\.|\.svm$' || note_fail "asan tests"
    # The SVM tests' sanitized guests run against the plain stage's server: in
    # an ASan-built server PoCL's SVM allocations come from ASan's heap, whose
    # fixed range ASan reserves in the guest too, so the guest cannot mirror
    # them at the same addresses and pointers stored inside SVM cannot work.
    # handle.opencl_foreign runs again with SVM that way.
    local plain=$BUILD
    [ "${plain#/}" = "$plain" ] && plain=$ROOT/$plain
    if [ -x "$plain/examples/opencl/apigen-server-opencl" ]; then
        OCL_E2E_SERVER=$plain/examples/opencl/apigen-server-opencl \
            SEC_OCL_SERVER=$plain/examples/opencl/apigen-server-opencl ASAN_OPTIONS=$asan \
            ctest --test-dir "$ASAN_BUILD" -j "$JOBS" --output-on-failure -LE "bench|valgrind" \
            -R '\.svm\.|\.svm$|^security\.handle\.opencl_foreign$' || note_fail "asan svm tests"
    else
        echo "SKIP: the OpenCL SVM tests (they need the plain stage's server: $plain)"
    fi
    ASAN_OPTIONS=$asan:detect_leaks=0 ctest --test-dir "$ASAN_BUILD" --output-on-failure \
        -R '^unit\.runtime$' || note_fail "asan unit.runtime"
}

run_fuzz() {
    stage "libFuzzer ($FUZZ_BUILD, ${FUZZ_SECONDS} s)"
    command -v clang >/dev/null || { echo "SKIP: no clang"; return; }
    configure_build "$FUZZ_BUILD" -DCMAKE_C_COMPILER=clang -DAPIGEN_FUZZ=ON \
        -DAPIGEN_BUILD_GENERATOR=OFF || { note_fail "fuzz build"; return; }
    local targets=() t
    for t in "$FUZZ_BUILD"/tests/fuzz/fuzz_*; do [ -x "$t" ] && targets+=("$t"); done
    [ ${#targets[@]} -gt 0 ] || { note_fail "no fuzz targets built"; return; }
    local each=$((FUZZ_SECONDS / ${#targets[@]}))
    [ "$each" -lt 5 ] && each=5
    for t in "${targets[@]}"; do
        local name=${t##*/fuzz_} corpus=$FUZZ_BUILD/corpus-${t##*/fuzz_}
        mkdir -p "$corpus" "$FUZZ_BUILD/artifacts"
        local seeds=$ROOT/tests/fuzz/corpus/$name
        [ -d "$seeds" ] || seeds=
        echo "-- $t: $each s"
        # shellcheck disable=SC2086
        "$t" -max_total_time="$each" -malloc_limit_mb=512 -rss_limit_mb=2048 -timeout=20 \
            -close_fd_mask=2 -print_final_stats=1 -artifact_prefix="$FUZZ_BUILD/artifacts/$name-" \
            "$corpus" $seeds >"$FUZZ_BUILD/fuzz-$name.log" 2>&1
        local rc=$?
        grep -E "^stat::(number_of_executed_units|new_units_added)|^Done " "$FUZZ_BUILD/fuzz-$name.log"
        if [ "$rc" != 0 ]; then
            # fuzz_opencl runs PoCL in the target: a crash inside PoCL is a
            # server crash in thread mode, an argument the OpenCL host code
            # must refuse (specs/opencl/host.c, runtime/SECURITY.md)
            tail -60 "$FUZZ_BUILD/fuzz-$name.log"
            note_fail "fuzz_$name found a crash (artifacts in $FUZZ_BUILD/artifacts)" "$rc"
        fi
    done
}

for s in "${STAGES[@]}"; do
    case $s in
    plain) run_plain ;;
    asan) run_asan ;;
    fuzz) run_fuzz ;;
    *) echo "unknown stage $s (plain, asan, fuzz)"; exit 2 ;;
    esac
done
echo
[ "$RC" = 0 ] && echo "==== all stages passed ====" || echo "==== FAILED (status $RC) ===="
exit "$RC"
