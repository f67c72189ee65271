#!/usr/bin/env python3
"""pynvml_procs HOLDER_PID: GPU 0's processes through pynvml (nvidia-ml-py),
each pid printed as its role (self, holder, other N) with its memory and the
name nvmlSystemGetProcessName gives ("=argv0" when it is the process's argv[0]
as /proc says), so that a native and a forwarded run print the same lines
(tests/nvml/run.sh procs, tests/gpu/nvml-procs.sh). Exit 77 without pynvml."""
import os
import sys

try:
    import pynvml as n
except ImportError:
    print("SKIP: pynvml (pip install nvidia-ml-py) is not installed")
    sys.exit(77)

holder = int(sys.argv[1]) if len(sys.argv) > 1 else 0


def argv0(pid):
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            return f.read().split(b"\0")[0].decode(errors="replace")
    except OSError:
        return None


def row(pid, more):
    role = "self" if pid == os.getpid() else "holder" if pid == holder else "other %d" % pid
    try:
        name = n.nvmlSystemGetProcessName(pid)
        name = name.decode() if isinstance(name, bytes) else name
        name = "=argv0" if name == argv0(pid) else name
    except n.NVMLError as e:
        name = str(e)
    return "    %s name %s%s" % (role, name, more)


n.nvmlInit()
h = n.nvmlDeviceGetHandleByIndex(0)
for label, fn in (("compute", n.nvmlDeviceGetComputeRunningProcesses),
                  ("graphics", n.nvmlDeviceGetGraphicsRunningProcesses)):
    try:
        procs = fn(h)
        print(label, len(procs))
        for line in sorted(row(p.pid, " memory %s" % p.usedGpuMemory) for p in procs):
            print(line)
    except n.NVMLError as e:
        print(label, e)
try:
    pids = n.nvmlDeviceGetAccountingPids(h)
    print("accounting pids", len(pids))
    for line in sorted(row(p, "") for p in pids):
        print(line)
except n.NVMLError as e:
    print("accounting pids", e)
n.nvmlShutdown()
