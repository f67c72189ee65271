#!/bin/sh
# tests/gpu/nvml-count.sh: NVML device counts and UUIDs natively, through the NVML stub
# (apigen-server-nvml), and in PyTorch's library mode (every stub preloaded, one
# apigen-server-cuda-family), with nvmlInit and nvmlInit_v2, the way PyTorch asks them
# (torch.cuda.device_count: ctypes nvmlInit + nvmlDeviceGetCount_v2). On the H200 (2026-11-26)
# PyTorch in library mode counted 2 devices through the stub where CUDA counts 1.
#   BUILD=/tmp/b NOBUILD=1 sh tests/gpu/nvml-count.sh
set -u
export PATH=/usr/local/cuda/bin:$PATH
B=${BUILD:-/tmp/bn}
PY=${PYTHON:-/opt/torch/.venv/bin/python3}
env | grep -i -E "visible|nvidia|cuda" | head; ls /dev/nvidia*; nvidia-smi -L
if [ "${NOBUILD:-0}" != 1 ]; then
    cmake -S . -B $B -DAPIGEN_BUILD_GENERATOR=OFF -DCMAKE_BUILD_TYPE=Release >/tmp/c.log 2>&1 || tail /tmp/c.log
    cmake --build $B -j16 --target nvml_stub apigen-server-nvml apigen-server-cuda-family >/tmp/b.log 2>&1 || tail -20 /tmp/b.log
fi
cat > /tmp/n.py <<'PY'
from ctypes import *
import sys
h = CDLL("libnvidia-ml.so.1")
for init in ("nvmlInit", "nvmlInit_v2"):
    print(init, getattr(h, init)())
    for f in ("nvmlDeviceGetCount", "nvmlDeviceGetCount_v2"):
        c = c_int(-1); r = getattr(h, f)(byref(c)); print(" ", f, r, c.value)
    c = c_int(-1); h.nvmlDeviceGetCount_v2(byref(c))
    for i in range(c.value):
        d = c_void_p(); r = h.nvmlDeviceGetHandleByIndex_v2(i, byref(d)); b = create_string_buffer(96)
        r2 = h.nvmlDeviceGetUUID(d, b, 96); print("  dev", i, r, r2, b.value)
if len(sys.argv) > 1:
    import torch
    print("torch.cuda.device_count", torch.cuda.device_count(), "_cuda_getDeviceCount", torch._C._cuda_getDeviceCount())
PY
echo "== native"; $PY /tmp/n.py torch
rm -f /tmp/n.sock; APIGEN_TRACE=/tmp/n.strace $B/examples/nvml/apigen-server-nvml --listen unix:///tmp/n.sock > /tmp/ns.log 2>&1 & sp=$!; sleep 0.5
echo "== forwarded (apigen-server-nvml)"; APIGEN_SERVER=unix:///tmp/n.sock LD_LIBRARY_PATH=$B/stub $PY /tmp/n.py
kill $sp; grep -v " ok " /tmp/n.strace | head; grep -i "count\|init" /tmp/n.strace | head -12
preload=
for l in libcuda.so.1 libcudart.so.13 libcublasLt.so.13 libcublas.so.13 libnvidia-ml.so.1; do
    [ -e "$B/stub/$l" ] && preload="$preload${preload:+:}$B/stub/$l"
done
rm -f /tmp/f.sock; APIGEN_TRACE=/tmp/f.strace $B/examples/cuda/apigen-server-cuda-family --listen unix:///tmp/f.sock > /tmp/fs.log 2>&1 & sp=$!; sleep 0.5
echo "== library mode (apigen-server-cuda-family, preload)"
APIGEN_SERVER=unix:///tmp/f.sock LD_PRELOAD=$preload LD_LIBRARY_PATH=$B/stub $PY /tmp/n.py torch 2>&1 | tail -20
kill $sp; grep -i "count\|init" /tmp/f.strace | head -20; tail -5 /tmp/fs.log
