#!/usr/bin/env python3
"""pynvml_query: the queries of tests/gpu/nvml.sh and tests/nvml through
pynvml (nvidia-ml-py), which loads whichever libnvidia-ml.so.1 comes first.
Values that change from one moment to the next print as "present" unless
--volatile is given. Exit 77 when pynvml is not installed."""
import sys

try:
    import pynvml as n
except ImportError:
    print("SKIP: pynvml (pip install nvidia-ml-py) is not installed")
    sys.exit(77)

vol = "--volatile" in sys.argv


def v(x):
    return str(x) if vol else "present"


def s(x):
    return x.decode() if isinstance(x, bytes) else str(x)


n.nvmlInit()
print("driver", s(n.nvmlSystemGetDriverVersion()))
print("cuda driver", n.nvmlSystemGetCudaDriverVersion())
count = n.nvmlDeviceGetCount()
print("count", count)
for i in range(count):
    h = n.nvmlDeviceGetHandleByIndex(i)
    print(i, "name", s(n.nvmlDeviceGetName(h)))
    print(i, "uuid", s(n.nvmlDeviceGetUUID(h)))
    m = n.nvmlDeviceGetMemoryInfo(h)
    print(i, "memory total", m.total, "used", v(m.used))
    try:
        m2 = n.nvmlDeviceGetMemoryInfo(h, version=n.nvmlMemory_v2)
        print(i, "memory v2 total", m2.total, "reserved", m2.reserved)
    except n.NVMLError as e:
        print(i, "memory v2 error", e)
    u = n.nvmlDeviceGetUtilizationRates(h)
    print(i, "utilization", v(u.gpu), v(u.memory))
    p = n.nvmlDeviceGetPciInfo(h)
    print(i, "pci", s(p.busId), hex(p.pciDeviceId))
    procs = n.nvmlDeviceGetComputeRunningProcesses(h)
    print(i, "compute processes", len(procs) if vol else "present")
    for pr in procs if vol else []:
        print(i, "  pid", pr.pid, "memory", pr.usedGpuMemory)
try:
    n.nvmlDeviceGetHandleByIndex(count)
except n.NVMLError as e:
    print("past the last:", e)
n.nvmlShutdown()
print("shutdown ok")
