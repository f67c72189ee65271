#!/bin/sh
# selftest.sh: builds the shim and checks it without a GPU: a fake driver
# (selftest_fake.c) stands for the real one; selftest_app.c checks that every
# argument and result goes through, then the log is checked for the events.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
# The trampolines are x86-64 asm; the symbol list comes from the toolkit's stub.
[ "$(uname -m)" = x86_64 ] || { echo "selftest: not x86-64: skipped"; exit 77; }
export DRVTRACE_STUB=${DRVTRACE_STUB:-${CUDA_HOME:-/usr/local/cuda}/lib64/stubs/libcuda.so}
[ -e "$DRVTRACE_STUB" ] || { echo "selftest: no $DRVTRACE_STUB (set CUDA_HOME): skipped"; exit 77; }
command -v gcc >/dev/null 2>&1 || { echo "selftest: no gcc: skipped"; exit 77; }
work=${1:-$(mktemp -d)}
mkdir -p "$work"
DRVTRACE_REAL=/nonexistent "$here/build.sh" "$work/shim" >/dev/null
gcc -std=c11 -O1 -fPIC -shared -Wall -Wextra -o "$work/libfake.so" "$here/selftest_fake.c"
gcc -std=c11 -O1 -Wall -Wextra -o "$work/app" "$here/selftest_app.c" -ldl
fail() { echo "selftest: FAIL: $*"; exit 1; }

rm -f "$work/nodrv.log"
LD_LIBRARY_PATH="$work/shim" DRVTRACE_REAL=/nonexistent DRVTRACE_LOG="$work/nodrv.log" "$work/app" 0
grep -q "no real driver found" "$work/nodrv.log" || fail "no-driver run did not log it"

rm -f "$work/fake.log"
LD_LIBRARY_PATH="$work/shim" DRVTRACE_REAL="$work/libfake.so" DRVTRACE_LOG="$work/fake.log" DRVTRACE_SLOT_N=5 "$work/app" 1
log=$work/fake.log
for pat in "gpa_v2 sym=cuInit ver=12000 .*status=0 .*via=cuInit" \
           "gpa_v2 sym=cuHidden .*anonymous trampoline" \
           "gpa_v2 sym=cuNothing .*status=500" \
           "export_table uuid=ab010203-0405-0607-0809-0a0b0c0d0e0f .*status=0" \
           "table ab010203-0405-0607-0809-0a0b0c0d0e0f: 6 words (size from word 0), [0-9]* wrapped" \
           "dcall ET ab010203-0405-0607-0809-0a0b0c0d0e0f \[2\] #1 (0x1, 0x2, 0x3, 0x4, 0x5, 0x6)" \
           "ret ET ab010203-0405-0607-0809-0a0b0c0d0e0f \[2\] = 0xfffffffffffffffd$" \
           "dcall cuHidden@12000/0x0 #1" \
           "summary slot ET ab010203-0405-0607-0809-0a0b0c0d0e0f \[1\] 100" \
           "table ac010203-0405-0607-0809-0a0b0c0d0e0f: 2 words (no size word), [0-9]* wrapped" \
           "summary slot ET ac010203-0405-0607-0809-0a0b0c0d0e0f \[0\] 1" \
           "mem-after ET ab010203-0405-0607-0809-0a0b0c0d0e0f \[5\] a0=\[8877665544332211" \
           "summary sym cuInit 3"; do
    grep -q "$pat" "$log" || fail "no line matching '$pat' in $log"
done
n=$(grep -c "dcall ET ab010203-0405-0607-0809-0a0b0c0d0e0f \[1\]" "$log")
[ "$n" = 5 ] || fail "DRVTRACE_SLOT_N=5 logged $n calls"
rm -f "$work/nowrap.log"
LD_LIBRARY_PATH="$work/shim" DRVTRACE_REAL="$work/libfake.so" DRVTRACE_LOG="$work/nowrap.log" \
    DRVTRACE_NOWRAP=ab010203-0405-0607-0809-0a0b0c0d0e0f "$work/app" 1 >/dev/null
grep -q "table ab010203-0405-0607-0809-0a0b0c0d0e0f returned as is" "$work/nowrap.log" || fail "DRVTRACE_NOWRAP ignored"
LD_LIBRARY_PATH="$work/shim" DRVTRACE_REAL="$work/libfake.so" DRVTRACE_LOG="$work/nowrap.log" \
    DRVTRACE_GPA_WRAP=0 "$work/app" 1 2>/dev/null && fail "with DRVTRACE_GPA_WRAP=0 the app should see the real cuInit"
# DRVTRACE_EXPTAB: another library answers cuGetExportTable (apigen's tables).
gcc -std=c11 -O1 -fPIC -shared -Wall -Wextra -o "$work/libexptab.so" "$here/selftest_exptab.c"
rm -f "$work/exptab.log"
LD_LIBRARY_PATH="$work/shim" DRVTRACE_REAL="$work/libfake.so" DRVTRACE_LOG="$work/exptab.log" \
    DRVTRACE_EXPTAB="$work/libexptab.so" "$work/app" 1 >/dev/null 2>&1 || :
grep -q "exptab .*apigen_cuda_export_table answers" "$work/exptab.log" || fail "DRVTRACE_EXPTAB not loaded"
grep -q "export_table uuid=ab010203-0405-0607-0809-0a0b0c0d0e0f .*status=0 .*served=apigen" "$work/exptab.log" ||
    fail "DRVTRACE_EXPTAB did not answer cuGetExportTable"
rm -f "$work/exptab.log"
LD_LIBRARY_PATH="$work/shim" DRVTRACE_REAL="$work/libfake.so" DRVTRACE_LOG="$work/exptab.log" \
    DRVTRACE_EXPTAB="$work/libexptab.so" DRVTRACE_EXPTAB_REAL=ab010203-0405-0607-0809-0a0b0c0d0e0f \
    "$work/app" 1 >/dev/null 2>&1 || :
grep -q "export_table uuid=ab010203-0405-0607-0809-0a0b0c0d0e0f .*status=0 .*served=real" "$work/exptab.log" ||
    fail "DRVTRACE_EXPTAB_REAL did not hand the table to the real driver"
echo "selftest: PASS ($work)"
