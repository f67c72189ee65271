#!/bin/sh
# tests/gpu/trace-driver.sh: on the GPU machine, learn which driver entry
# points, cuGetProcAddress answers and private export tables (cuGetExportTable)
# NVIDIA's runtime, cuBLAS, cuDNN and PyTorch use. Builds the tracing
# libcuda.so.1 (tests/gpu/drvtrace), runs each case natively and then with the
# shim first on LD_LIBRARY_PATH, and writes one log per case to $OUT.
#
#   OUT=/some/dir tests/gpu/trace-driver.sh     (from the repository root)
#
# A case whose traced run differs from its native run (exit status or stdout)
# is run again with less wrapping, because the runtime's integrity check may
# hash table addresses: 1) return values not traced and the CUDART_INTERFACE
# and INTEGRITY_CHECK tables returned as they are, 2) no table wrapped, 3)
# cuGetProcAddress answers not swapped either. Every attempt is in the log.
# Env: OUT (default ./drvtrace-out), CUDA_ARCH (default sm_90), PYTHON
# (default python3), WORK (scratch, default /tmp/drvtrace-work), BUDGET_S
# (no more fallbacks past this many seconds, default 420).
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 1
OUT=${OUT:-$root/drvtrace-out}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
work=${WORK:-/tmp/drvtrace-work}
rm -rf "$work" && mkdir -p "$work"
arch=${CUDA_ARCH:-sm_90}
py=${PYTHON:-python3}
budget=${BUDGET_S:-420}
start=$(date +%s)
if [ -z "${CUDA_HOME:-}" ]; then
    if command -v nvcc >/dev/null 2>&1; then CUDA_HOME=$(dirname "$(dirname "$(command -v nvcc)")")
    else CUDA_HOME=/usr/local/cuda; fi
fi
cudalib=$CUDA_HOME/lib64
summary=$OUT/summary.txt
: > "$summary"
say() { echo "$*" | tee -a "$summary"; }

say "== trace-driver $(date -u '+%Y-%m-%d %H:%M UTC') on $(hostname)"
command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | tee -a "$summary"
shim=$work/shim
tests/gpu/drvtrace/build.sh "$shim" > "$work/build.txt" 2>&1 || { cat "$work/build.txt"; exit 1; }
grep '^drvtrace:' "$work/build.txt" | tee -a "$summary"
if [ -s "$shim/syms.only-real" ]; then
    echo "symbols only in the real driver: $(tr '\n' ' ' < "$shim/syms.only-real")" >> "$summary"
    echo "symbols only in the stub: $(tr '\n' ' ' < "$shim/syms.only-stub")" >> "$summary"
fi

echo "== build examples (nvcc -arch=$arch)"
for ex in vector_add matmul; do
    "$CUDA_HOME/bin/nvcc" -arch="$arch" -o "$work/${ex}_static" "examples/cuda/$ex.cu" > "$work/nvcc.txt" 2>&1 &&
    "$CUDA_HOME/bin/nvcc" -arch="$arch" -cudart shared -o "$work/${ex}_shared" "examples/cuda/$ex.cu" >> "$work/nvcc.txt" 2>&1 ||
        { say "nvcc failed for $ex:"; tail -20 "$work/nvcc.txt" | tee -a "$summary"; }
done

# The PyTorch cases; stdout must be deterministic (compared with native),
# evidence about what was loaded goes to stderr.
cat > "$work/torch_common.py" <<'PYEOF'
import sys, torch
def evidence():
    seen = []
    for l in open("/proc/self/maps"):
        p = l.split()[-1]
        if "libcuda" in p and p not in seen:
            seen.append(p)
    print("mapped libcuda*: " + " ".join(seen), file=sys.stderr)
torch.manual_seed(0)
torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False
torch.use_deterministic_algorithms(True, warn_only=True)
PYEOF
cat > "$work/torch_basic.py" <<'PYEOF'
from torch_common import *
print("available", torch.cuda.is_available(), "count", torch.cuda.device_count())
print("name", torch.cuda.get_device_name(0))
x = torch.arange(1 << 16, device="cuda", dtype=torch.float32)
y = x + x * 2
torch.cuda.synchronize()
print("sum", y.sum().item(), "y[12345]", y[12345].item())
evidence()
PYEOF
cat > "$work/torch_blas.py" <<'PYEOF'
from torch_common import *
a = torch.randn(1024, 1024, device="cuda")
b = torch.randn(1024, 1024, device="cuda")
c = a @ b
torch.cuda.synchronize()
print("matmul sum %.6e c[3,7] %.6e" % (c.double().sum().item(), c[3, 7].item()))
m = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10)).cuda()
x = torch.randn(32, 64, device="cuda")
loss = m(x).square().mean()
loss.backward()
torch.cuda.synchronize()
print("mlp loss %.6e grad0 %.6e" % (loss.item(), m[0].weight.grad.double().sum().item()))
evidence()
PYEOF
cat > "$work/torch_cudnn.py" <<'PYEOF'
from torch_common import *
torch.backends.cudnn.enabled = True
print("cudnn", torch.backends.cudnn.is_available(), torch.backends.cudnn.version())
conv = torch.nn.Conv2d(3, 8, 3, padding=1).cuda()
x = torch.randn(2, 3, 16, 16, device="cuda", requires_grad=True)
y = conv(x)
y.square().mean().backward()
torch.cuda.synchronize()
print("conv out %.6e wgrad %.6e xgrad %.6e" % (y.double().sum().item(), conv.weight.grad.double().sum().item(),
                                                x.grad.double().sum().item()))
evidence()
PYEOF

# joinpath A B ...: the non-empty arguments joined with ':' (an empty
# LD_LIBRARY_PATH element would mean the current directory).
joinpath() {
    jp=
    for e in "$@"; do [ -n "$e" ] && jp=${jp:+$jp:}$e; done
    echo "$jp"
}
same() { [ "$(cat "$1")" = "$(cat "$2")" ]; }

# run_case NAME LIBPATH CMD...: native once, then traced (with fallbacks).
run_case() {
    name=$1; libpath=$2; shift 2
    log=$OUT/$name.log
    : > "$log"
    ( cd "$work" && LD_LIBRARY_PATH=$(joinpath "$libpath" "${LD_LIBRARY_PATH:-}") timeout 120 "$@" ) \
        > "$work/$name.native.out" 2> "$work/$name.native.err"
    nrc=$?
    attempt=0
    for mode in full noret_nowrap2 nowrap_all nogpa; do
        case $mode in
            full) envs="" ;;
            noret_nowrap2) envs="DRVTRACE_RET=0 DRVTRACE_NOWRAP=6bd5fb6c-5bf4-e74a-8987-d93912fd9df9,d4082055-bde6-704b-8d34-ba123c66e1f2" ;;
            nowrap_all) envs="DRVTRACE_RET=0 DRVTRACE_NOWRAP=all" ;;
            nogpa) envs="DRVTRACE_RET=0 DRVTRACE_NOWRAP=all DRVTRACE_GPA_WRAP=0" ;;
        esac
        attempt=$((attempt + 1))
        echo "# attempt $attempt $mode $envs" >> "$log"
        ( cd "$work" && env $envs DRVTRACE_LOG="$log" LD_LIBRARY_PATH=$(joinpath "$shim" "$libpath" "${LD_LIBRARY_PATH:-}") \
            timeout 120 "$@" ) > "$work/$name.out" 2> "$work/$name.err"
        rc=$?
        echo "# rc=$rc (native $nrc)" >> "$log"
        sed 's/^/# app: /' "$work/$name.out" "$work/$name.err" | head -60 >> "$log"
        if [ "$rc" = "$nrc" ] && same "$work/$name.out" "$work/$name.native.out"; then
            say "$name: attempt $attempt ($mode) matches native (rc $rc)"
            break
        fi
        say "$name: attempt $attempt ($mode) rc=$rc native rc=$nrc; output $(same "$work/$name.out" "$work/$name.native.out" && echo same || echo differs)"
        { echo "  native: $(head -c 600 "$work/$name.native.out" | tr '\n' '|') $(tail -c 300 "$work/$name.native.err" | tr '\n' '|')"
          echo "  traced: $(head -c 600 "$work/$name.out" | tr '\n' '|') $(tail -c 300 "$work/$name.err" | tr '\n' '|')"; } | tee -a "$summary"
        [ $(( $(date +%s) - start )) -lt "$budget" ] || { say "$name: time budget spent, no more fallbacks"; break; }
    done
    grep -h "mapped libcuda" "$work/$name.err" 2>/dev/null | head -1 | sed "s/^/$name: /" | tee -a "$summary"
}

echo "== run"
for ex in vector_add matmul; do
    [ -x "$work/${ex}_static" ] && run_case "${ex}_static" "" "$work/${ex}_static"
    [ -x "$work/${ex}_shared" ] && run_case "${ex}_shared" "$cudalib" "$work/${ex}_shared"
done
if "$py" -c "import torch" 2>/dev/null; then
    for t in torch_basic torch_blas torch_cudnn; do
        run_case "$t" "" "$py" "$work/$t.py"
    done
else
    say "python: $py cannot import torch; PyTorch cases skipped"
fi

# Full detail to summary.txt, the short form last on stdout.
"$py" tests/gpu/drvtrace/summarize.py "$OUT"/*.log >> "$summary" 2>&1 ||
    python3 tests/gpu/drvtrace/summarize.py "$OUT"/*.log >> "$summary" 2>&1
for f in "$OUT"/*.log; do
    [ "$(wc -c < "$f")" -gt 1000000 ] && command -v gzip >/dev/null 2>&1 && gzip -9 "$f"
done
ls -la "$OUT" | tail -n +2 >> "$summary"
echo "== summary (full: $summary; logs: $OUT) $(( $(date +%s) - start ))s"
python3 tests/gpu/drvtrace/summarize.py --short "$OUT"/*.log* | cut -c1-600 | head -c 9000
