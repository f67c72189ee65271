#!/bin/sh
# tests/gpu/exptab-check.sh: on the GPU machine, apigen's cuGetExportTable
# tables (specs/cuda/export_tables.c) under NVIDIA's own runtime and PyTorch,
# on the real driver, before (and independently of) the forwarding stub:
#
#   OUT=/some/dir tests/gpu/exptab-check.sh     (from the repository root)
#
# 1. integrity: tests/gpu/exptab/integrity.c compares apigen's integrity
#    answer with the real driver's for the real tables' addresses (versions
#    13000-13002, main thread and another); prints the real driver's status
#    for an unknown UUID and for the tables apigen refuses.
# 2. cases: vector_add and matmul (static runtime and -cudart shared),
#    torch_basic, torch_blas, torch_cudnn, each natively and then with the
#    tracing shim (tests/gpu/drvtrace) whose cuGetExportTable is answered by
#    apigen's tables (DRVTRACE_EXPTAB); every other driver call goes to the
#    real driver. Same stdout and exit status = the tables work for that
#    case. CUDART_INTERFACE and INTEGRITY_CHECK are handed out as they are
#    (the runtime hashes their addresses); the other tables are wrapped, so
#    the log shows each entry's calls and results. A PyTorch case that
#    differs runs once more with the real driver's 69a28e9f table (which
#    apigen refuses): SAME then means PyTorch needs that table.
# Output: $OUT/summary.txt (a table), $OUT/integrity.txt, $OUT/<case>.log.
# Env: OUT (default ./exptab-out), CUDA_ARCH (sm_90), PYTHON (python3),
# WORK (scratch, default /tmp/exptab-work).
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 1
OUT=${OUT:-$root/exptab-out}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
work=${WORK:-/tmp/exptab-work}
rm -rf "$work" && mkdir -p "$work"
arch=${CUDA_ARCH:-sm_90}
py=${PYTHON:-python3}
if [ -z "${CUDA_HOME:-}" ]; then
    if command -v nvcc >/dev/null 2>&1; then CUDA_HOME=$(dirname "$(dirname "$(command -v nvcc)")")
    else CUDA_HOME=/usr/local/cuda; fi
fi
cudalib=$CUDA_HOME/lib64
summary=$OUT/summary.txt
: > "$summary"
say() { echo "$*" | tee -a "$summary"; }
say "== exptab-check $(date -u '+%Y-%m-%d %H:%M UTC') on $(hostname), commit $(git rev-parse --short HEAD 2>/dev/null)"
command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | tee -a "$summary"
# generated/cuda: cuda_features.h (what the toolkit's headers declare) for export_tables.c
cflags="-std=c11 -O1 -g -Wall -Wextra -Ispecs/cuda -Iruntime -Igenerated/cuda -I$CUDA_HOME/include"

echo "== 1. integrity answer against the real driver"
gcc $cflags -o "$work/integrity" tests/gpu/exptab/integrity.c tests/gpu/exptab/log.c \
    specs/cuda/export_tables.c -L"$cudalib/stubs" -lcuda -lpthread > "$work/build.txt" 2>&1 ||
    { cat "$work/build.txt"; exit 1; }
"$work/integrity" > "$OUT/integrity.txt" 2>&1
irc=$?
cat "$OUT/integrity.txt" | tee -a "$summary"
say "integrity program: rc=$irc"

echo "== 2. build the shim and apigen's tables as a library"
shim=$work/shim
tests/gpu/drvtrace/build.sh "$shim" > "$work/build.txt" 2>&1 || { cat "$work/build.txt"; exit 1; }
gcc $cflags -fPIC -shared -o "$work/libexptab.so" specs/cuda/export_tables.c tests/gpu/exptab/log.c \
    -L"$shim" -lcuda -lpthread >> "$work/build.txt" 2>&1 || { cat "$work/build.txt"; exit 1; }
for ex in vector_add matmul; do
    "$CUDA_HOME/bin/nvcc" -arch="$arch" -o "$work/${ex}_static" "examples/cuda/$ex.cu" > "$work/nvcc.txt" 2>&1 &&
    "$CUDA_HOME/bin/nvcc" -arch="$arch" -cudart shared -o "$work/${ex}_shared" "examples/cuda/$ex.cu" >> "$work/nvcc.txt" 2>&1 ||
        { say "nvcc failed for $ex:"; tail -20 "$work/nvcc.txt" | tee -a "$summary"; }
done
cat > "$work/torch_common.py" <<'PYEOF'
import torch
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
PYEOF
cat > "$work/torch_cudnn.py" <<'PYEOF'
from torch_common import *
print("cudnn", torch.backends.cudnn.is_available(), torch.backends.cudnn.version())
conv = torch.nn.Conv2d(3, 8, 3, padding=1).cuda()
x = torch.randn(2, 3, 16, 16, device="cuda", requires_grad=True)
y = conv(x)
y.square().mean().backward()
torch.cuda.synchronize()
print("conv out %.6e wgrad %.6e xgrad %.6e" % (y.double().sum().item(), conv.weight.grad.double().sum().item(),
                                                x.grad.double().sum().item()))
PYEOF

joinpath() {
    jp=
    for e in "$@"; do [ -n "$e" ] && jp=${jp:+$jp:}$e; done
    echo "$jp"
}
nowrap2=6bd5fb6c-5bf4-e74a-8987-d93912fd9df9,d4082055-bde6-704b-8d34-ba123c66e1f2
results=$work/results.txt
: > "$results"

# run_case NAME LIBPATH CMD...: natively, then on apigen's tables.
run_case() {
    name=$1; libpath=$2; shift 2
    log=$OUT/$name.log
    : > "$log"
    ( cd "$work" && LD_LIBRARY_PATH=$(joinpath "$libpath" "${LD_LIBRARY_PATH:-}") timeout 180 "$@" ) \
        > "$work/$name.native.out" 2> "$work/$name.native.err"
    nrc=$?
    modes="wrapped nowrap"
    case $name in torch_*) modes="$modes real69a2" ;; esac
    for mode in $modes; do
        case $mode in
            wrapped) envs="DRVTRACE_NOWRAP=$nowrap2" ;;
            nowrap) envs="DRVTRACE_NOWRAP=all DRVTRACE_RET=0" ;;
            real69a2) envs="DRVTRACE_NOWRAP=all DRVTRACE_RET=0 DRVTRACE_EXPTAB_REAL=69a28e9f-2449-8b47-b030-c5da330ea4e9" ;;
        esac
        echo "# mode $mode $envs" >> "$log"
        from=$(wc -l < "$log")
        ( cd "$work" && env $envs DRVTRACE_EXPTAB="$work/libexptab.so" DRVTRACE_LOG="$log" \
            LD_LIBRARY_PATH=$(joinpath "$shim" "$libpath" "${LD_LIBRARY_PATH:-}") timeout 180 "$@" ) \
            > "$work/$name.out" 2> "$work/$name.err"
        rc=$?
        echo "# rc=$rc (native $nrc)" >> "$log"
        sed 's/^/# app: /' "$work/$name.out" "$work/$name.err" | head -80 >> "$log"
        served=$(tail -n +"$from" "$log" | grep -o 'export_table uuid=[0-9a-f-]* .*status=[0-9]*' | sed -n 's/.*uuid=\([0-9a-f]\{8\}\)[^ ]* .*status=\([0-9]*\).*/\1=\2/p' | sort -u | tr '\n' ' ')
        apigen_lines=$(grep -c '^apigen\[' "$work/$name.err")
        if [ "$rc" = "$nrc" ] && cmp -s "$work/$name.out" "$work/$name.native.out"; then verdict=SAME; else verdict=DIFFERS; fi
        printf '%-18s %-8s native=%-3s apigen=%-3s %-8s apigen-log-lines=%s tables: %s\n' \
            "$name" "$mode" "$nrc" "$rc" "$verdict" "$apigen_lines" "$served" >> "$results"
        if [ "$verdict" = DIFFERS ]; then
            { echo "  $name native: $(head -c 400 "$work/$name.native.out" | tr '\n' '|') $(tail -c 300 "$work/$name.native.err" | tr '\n' '|')"
              echo "  $name apigen: $(head -c 400 "$work/$name.out" | tr '\n' '|') $(tail -c 600 "$work/$name.err" | tr '\n' '|')"; } >> "$results"
        fi
        grep '^apigen\[' "$work/$name.err" | sort | uniq -c | head -20 | sed "s/^/  $name $mode: /" >> "$results"
        [ "$verdict" = SAME ] && break
    done
}

echo "== 3. cases"
for ex in vector_add matmul; do
    [ -x "$work/${ex}_static" ] && run_case "${ex}_static" "" "$work/${ex}_static"
    [ -x "$work/${ex}_shared" ] && run_case "${ex}_shared" "$cudalib" "$work/${ex}_shared"
done
if "$py" -c "import torch" 2>/dev/null; then
    for t in torch_basic torch_blas torch_cudnn; do run_case "$t" "" "$py" "$work/$t.py"; done
else
    say "python: $py cannot import torch; PyTorch cases skipped"
fi
say "== cases (SAME: identical stdout and exit status natively and on apigen's tables)"
cat "$results" | tee -a "$summary"
# entries of apigen's tables the runtime called (wrapped mode), for the doc
grep -h "summary slot ET" "$OUT"/*.log 2>/dev/null | awk '$NF > 0 { print $6, $7, $NF }' | sort | uniq -c |
    sed 's/^/entry calls: /' >> "$summary"
