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
# CMAKE_ARGS (extra configure arguments for every build), CTEST_ARGS (extra ctest
# arguments, e.g. "-R badspec" for a quick check of this script). Exit status: 0 when
# every stage passed; the first failing stage's status otherwise (later
# stages still run, so one CI run shows everything).
#
# Each build's configure and build output goes to its folder
# (apigen-configure.log, apigen-build.log; shown when it fails), with a line
# of progress a minute while it builds; ctest's results go to
# apigen-ctest-*.xml there too. At the end a table: per stage the tests run,
# passed, failed, skipped (each skipped test and why below it) and seconds.
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

# The summary: one row per stage (stage|tests|passed|failed|skipped|seconds),
# the skipped tests' reasons and the failed tests' names.
SUMMARY=$(mktemp "${TMPDIR:-/tmp}/apigen-test-all.XXXXXX")
SUMMARY_NOTES=$SUMMARY.notes
: >"$SUMMARY_NOTES"
trap 'rm -f "$SUMMARY" "$SUMMARY_NOTES"' EXIT
abs() { case $1 in /*) echo "$1" ;; *) echo "$ROOT/$1" ;; esac; }

# ctest_run LABEL DIR ARGS...: ctest with its results in DIR/apigen-ctest-LABEL.xml
ctest_run() {
    local label=$1 dir=$2
    shift 2
    local junit
    junit=$(abs "$dir")/apigen-ctest-$label.xml
    rm -f "$junit"
    # shellcheck disable=SC2086
    ctest --test-dir "$dir" --output-junit "$junit" "$@" ${CTEST_ARGS:-}
}

# stage_row STAGE SECONDS JUNIT...: the stage's counts from ctest's files
stage_row() {
    local name=$1 secs=$2 counts
    shift 2
    if command -v python3 >/dev/null; then
        counts=$(python3 "$ROOT/scripts/ctest-summary.py" "$@")
    else
        counts="? ? ? ?"$'\n'"  (no python3 to read ctest's results)"
    fi
    read -r t p f k <<<"$(head -n 1 <<<"$counts")"
    echo "$name|$t|$p|$f|$k|$secs" >>"$SUMMARY"
    tail -n +2 <<<"$counts" | sed "s/^/$name: /" >>"$SUMMARY_NOTES"
}

# A long step with its output in LOG: one line of progress a minute (the last
# "[ NN%]" of a build), the log's tail when it fails.
run_logged() { # log command...
    local log=$1
    shift
    "$@" >"$log" 2>&1 &
    local pid=$! start=$SECONDS
    while kill -0 "$pid" 2>/dev/null; do
        local i
        for i in $(seq 60); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 1
        done
        kill -0 "$pid" 2>/dev/null || break
        echo "   ... $((SECONDS - start)) s, $(grep -o '^\[ *[0-9]*%\]' "$log" | tail -n 1) $(wc -l <"$log") lines in $log"
    done
    wait "$pid"
    local rc=$?
    if [ "$rc" != 0 ]; then
        echo "---- the last 60 lines of $log:"
        tail -n 60 "$log"
    fi
    return "$rc"
}

configure_build() { # dir args...
    local dir=$1
    shift
    mkdir -p "$dir" || return 1
    echo "-- configuring $dir (log: $dir/apigen-configure.log)"
    # shellcheck disable=SC2086
    run_logged "$dir/apigen-configure.log" cmake -S . -B "$dir" ${CMAKE_ARGS:-} "$@" || return 1
    echo "-- building $dir with $JOBS jobs (log: $dir/apigen-build.log)"
    run_logged "$dir/apigen-build.log" cmake --build "$dir" -j "$JOBS"
}

# The cuda.versions tests take NVIDIA's CUDA wheels from PyPI (about 90 MB the
# first time), cached; say so before they run.
announce_downloads() {
    local cache=${APIGEN_WHEEL_CACHE:-$HOME/.cache/apigen-cuda-wheels}
    local n
    n=$(ls "$cache"/*.whl 2>/dev/null | wc -l)
    echo "-- downloads: the cuda.versions tests take NVIDIA's CUDA wheels from PyPI into $cache"
    echo "   ($n wheels cached now; a missing one is downloaded, about 90 MB for all of them;"
    echo "   offline and uncached, those tests SKIP)"
}

run_plain() {
    stage "plain build and tests ($BUILD)"
    local t0=$SECONDS
    configure_build "$BUILD" || { note_fail "plain build"; echo "plain|build failed|-|-|-|$((SECONDS - t0))" >>"$SUMMARY"; return; }
    announce_downloads
    ctest_run plain "$BUILD" -j "$JOBS" --output-on-failure -LE bench || note_fail "plain tests"
    stage_row plain $((SECONDS - t0)) "$(abs "$BUILD")/apigen-ctest-plain.xml"
}

run_asan() {
    stage "AddressSanitizer + UndefinedBehaviorSanitizer build and tests ($ASAN_BUILD)"
    local t0=$SECONDS
    configure_build "$ASAN_BUILD" -DAPIGEN_SANITIZE=address,undefined -DCMAKE_BUILD_TYPE=Debug ||
        { note_fail "asan build"; echo "asan|build failed|-|-|-|$((SECONDS - t0))" >>"$SUMMARY"; return; }
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
    local junits=()
    ASAN_OPTIONS=$asan ctest_run asan "$ASAN_BUILD" -j "$JOBS" --output-on-failure \
        -LE "bench|valgrind" -E '^unit\.runtime$|\.svm\.|\.svm$' || note_fail "asan tests"
    junits+=("$(abs "$ASAN_BUILD")/apigen-ctest-asan.xml")
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
            ctest_run asan-svm "$ASAN_BUILD" -j "$JOBS" --output-on-failure -LE "bench|valgrind" \
            -R '\.svm\.|\.svm$|^security\.handle\.opencl_foreign$' || note_fail "asan svm tests"
        junits+=("$(abs "$ASAN_BUILD")/apigen-ctest-asan-svm.xml")
    else
        echo "SKIP: the OpenCL SVM tests (they need the plain stage's server: $plain)"
        echo "asan: the OpenCL SVM tests: SKIP: they need the plain stage's server ($plain)" >>"$SUMMARY_NOTES"
    fi
    ASAN_OPTIONS=$asan:detect_leaks=0 ctest_run asan-unit-runtime "$ASAN_BUILD" --output-on-failure \
        -R '^unit\.runtime$' || note_fail "asan unit.runtime"
    junits+=("$(abs "$ASAN_BUILD")/apigen-ctest-asan-unit-runtime.xml")
    stage_row asan $((SECONDS - t0)) "${junits[@]}"
}

run_fuzz() {
    stage "libFuzzer ($FUZZ_BUILD, ${FUZZ_SECONDS} s)"
    local t0=$SECONDS
    command -v clang >/dev/null || {
        echo "SKIP: no clang"
        echo "fuzz|0|0|0|all|0" >>"$SUMMARY"
        echo "fuzz: SKIP: no clang" >>"$SUMMARY_NOTES"
        return
    }
    configure_build "$FUZZ_BUILD" -DCMAKE_C_COMPILER=clang -DAPIGEN_FUZZ=ON \
        -DAPIGEN_BUILD_GENERATOR=OFF || { note_fail "fuzz build"; echo "fuzz|build failed|-|-|-|$((SECONDS - t0))" >>"$SUMMARY"; return; }
    local targets=() t fpass=0 ffail=0
    for t in "$FUZZ_BUILD"/tests/fuzz/fuzz_*; do [ -x "$t" ] && targets+=("$t"); done
    [ ${#targets[@]} -gt 0 ] || { note_fail "no fuzz targets built"; echo "fuzz|0|0|0|0|$((SECONDS - t0))" >>"$SUMMARY"; return; }
    local each=$((FUZZ_SECONDS / ${#targets[@]}))
    [ "$each" -lt 5 ] && each=5
    for t in "${targets[@]}"; do
        local name=${t##*/fuzz_} corpus=$FUZZ_BUILD/corpus-${t##*/fuzz_}
        mkdir -p "$corpus" "$FUZZ_BUILD/artifacts"
        local seeds=$ROOT/tests/fuzz/corpus/$name
        [ -d "$seeds" ] || seeds=
        echo "-- fuzz_$name: $each s, silent until it ends (log: $FUZZ_BUILD/fuzz-$name.log)"
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
            ffail=$((ffail + 1))
            echo "fuzz: FAILED fuzz_$name (artifacts in $FUZZ_BUILD/artifacts)" >>"$SUMMARY_NOTES"
        else
            fpass=$((fpass + 1))
        fi
    done
    echo "fuzz|${#targets[@]} targets|$fpass|$ffail|0|$((SECONDS - t0))" >>"$SUMMARY"
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
echo "==== summary ===="
{
    echo "stage|tests|passed|failed|skipped|seconds"
    cat "$SUMMARY"
} | awk -F'|' '{ printf "%-6s %14s %7s %7s %8s %8s\n", $1, $2, $3, $4, $5, $6 }'
if [ -s "$SUMMARY_NOTES" ]; then
    echo
    echo "skipped (why) and failed:"
    cat "$SUMMARY_NOTES"
fi
echo
[ "$RC" = 0 ] && echo "==== all stages passed ====" || echo "==== FAILED (status $RC) ===="
exit "$RC"
