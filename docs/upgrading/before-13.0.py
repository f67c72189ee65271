#!/usr/bin/env python3
"""specs/cudart.yaml as it stood before CUDA 13.0 (docs/upgrading.md): the
spec less the annotations written for 13.0, so that the 12.9 -> 13.0 walk
can be replayed. Usage: before-13.0.py < specs/cudart.yaml > OLD.yaml"""
import re
import sys

# entries written for functions 13.0 added (the whole entry goes)
NEW_IN_13 = {
    "cudaDeviceGetHostAtomicCapabilities", "cudaDeviceGetP2PAtomicCapabilities",
    "cudaLogsDumpToMemory", "cudaLogsRegisterCallback", "cudaLogsUnregisterCallback",
    "cudaMemPrefetchBatchAsync", "cudaMemDiscardBatchAsync",
    "cudaMemDiscardAndPrefetchBatchAsync",
}
# single lines written for 13.0's changed declarations
LINE_13 = re.compile(r"APIGEN_HAS_PARAM_\w+_(edgeData|edgeData_out|dependencyData)\b"
                     r"|APIGEN_HAS_PARAM_cudaMemcpy(3D)?BatchAsync_failIdx")

out, skip = [], False
lines = sys.stdin.read().split("\n")
i = 0
while i < len(lines):
    l = lines[i]
    if l.startswith("  # ---- CUDA 13.1 to 13.5"):
        break  # later releases' entries: not written yet either
    m = re.match(r"^  (\w+):", l)
    if m:
        skip = m.group(1) in NEW_IN_13
    elif re.match(r"^\S", l) or re.match(r"^  #", l):
        skip = False
    if skip:
        i += 1
        continue
    if LINE_13.search(l):
        # a `- when: ...` item spans the next line (its value) too
        if re.match(r"^\s*- when:", l):
            i += 1
        i += 1
        continue
    out.append(l)
    i += 1
sys.stdout.write("\n".join(out))
