#!/bin/sh
# tests/gpu/torch-driver.sh: PyTorch over apigen's CUDA driver stub (issue 12's
# acceptance): the same script natively and with the stub first on
# LD_LIBRARY_PATH against a local apigen-server-cuda (unix://), outputs
# compared. NVIDIA's runtime, cuBLAS and PyTorch's kernels run in the guest
# process; every driver call is forwarded.
#
#   BUILD=build-gpu-driver tests/gpu/torch-driver.sh   (after tests/gpu/driver.sh, which builds it)
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD:-$root/build-gpu-driver}
py=${PYTHON:-python3}
server=$build/examples/cuda/apigen-server-cuda
[ -x "$server" ] || { echo "torch-driver.sh: no $server (run tests/gpu/driver.sh first)"; exit 2; }
tmp=$(mktemp -d /tmp/apigen-torch.XXXXXX)
cat > "$tmp/t.py" <<'PY'
import sys, torch
torch.manual_seed(0)
torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False
torch.use_deterministic_algorithms(True)
def show(name, v): print(name, v, flush=True)
show("available", torch.cuda.is_available())
show("count", torch.cuda.device_count())
p = torch.cuda.get_device_properties(0)
show("name", p.name); show("memory", p.total_memory)
x = torch.arange(1 << 20, dtype=torch.float32, device="cuda")
y = x * 3 + 1
show("sum", float(y.sum())); show("max", float(y.max())); show("y[12345]", float(y[12345]))
show("index", y[torch.tensor([5, 77, 1000], device="cuda")].tolist())
h = torch.randn(4096).cuda().cpu()
show("roundtrip", float(h.sum()))
torch.cuda.synchronize()
a = torch.randn(1024, 1024, device="cuda"); b = torch.randn(1024, 1024, device="cuda")
c = a @ b
show("matmul", "%.6e %.6e" % (float(c.sum()), float(c[3, 7])))
m = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10)).cuda()
inp = torch.randn(32, 64, device="cuda"); tgt = torch.randint(0, 10, (32,), device="cuda")
loss = torch.nn.functional.cross_entropy(m(inp), tgt); loss.backward()
show("mlp", "%.6e %.6e" % (float(loss), float(m[0].weight.grad.sum())))
torch.cuda.synchronize()
show("done", True)
PY
"$server" --listen "unix://$tmp/cuda.sock" > "$tmp/server.log" 2>&1 &
spid=$!
i=0; while [ ! -S "$tmp/cuda.sock" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
timeout 300 "$py" "$tmp/t.py" > "$tmp/native.out" 2> "$tmp/native.err"; nrc=$?
APIGEN_SERVER="unix://$tmp/cuda.sock" LD_LIBRARY_PATH="$build/stub${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
    timeout 300 "$py" "$tmp/t.py" > "$tmp/fwd.out" 2> "$tmp/fwd.err"; frc=$?
kill "$spid" 2>/dev/null; wait "$spid" 2>/dev/null
echo "== native (exit $nrc)"; cat "$tmp/native.out"
echo "== forwarded over the driver stub, unix (exit $frc)"; cat "$tmp/fwd.out"
echo "== forwarded stderr (last 15 lines)"; tail -15 "$tmp/fwd.err"
echo "== server log (last 10 lines)"; tail -10 "$tmp/server.log"
if [ "$nrc" = "$frc" ] && cmp -s "$tmp/native.out" "$tmp/fwd.out"; then
    echo "torch-driver: IDENTICAL"; rc=0
else
    echo "torch-driver: DIFFERS"; diff "$tmp/native.out" "$tmp/fwd.out" | head -20; rc=1
fi
[ -n "${OUT:-}" ] && cp "$tmp"/*.out "$tmp"/*.err "$tmp/server.log" "$OUT"/ 2>/dev/null
rm -rf "$tmp"
exit $rc
