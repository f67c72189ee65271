# Shared by the framework cases: each section runs on its own, prints a
# digest of its results (so native and forwarded output compare line by
# line) or "ERROR <type>: <message>" (so one failing part neither hides the
# others nor ends the script); the time goes to stderr as "seconds S".
import hashlib
import sys
import time
import traceback

_t0 = time.time()
failed = []


def digest(arr):
    """16 hex digits of the bytes of a host (numpy) array."""
    return hashlib.sha256(arr.tobytes()).hexdigest()[:16]


def section(name, fn):
    try:
        out = fn()
        print(name, out, flush=True)
    except Exception as e:  # report and go on: the other sections still compare
        failed.append(name)
        print(name, "ERROR", type(e).__name__ + ":", str(e).splitlines()[0] if str(e) else "", flush=True)
        traceback.print_exc(file=sys.stderr)


def guest_check():
    """What of NVIDIA's driver this process holds: every mapped libcuda /
    libnvidia file (real paths) and every open /dev/nvidia* (the runner
    checks that a forwarded run holds only apigen's libcuda.so.1)."""
    import os
    maps, libs = set(), set()
    with open("/proc/self/maps") as f:
        for line in f:
            path = line.split()[-1] if len(line.split()) >= 6 else ""
            if "libcuda.so" in path or "libnvidia" in path:
                maps.add(os.path.realpath(path))
            elif "/libcu" in path or "/libnv" in path or "/libapigen" in path:
                libs.add(path)  # which CUDA libraries ran here (library mode: apigen's)
    devs = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            t = os.readlink("/proc/self/fd/" + fd)
        except OSError:
            continue
        if t.startswith("/dev/nvidia"):
            devs.add(t)
    print("guest-maps:", " ".join(sorted(maps)) or "none", file=sys.stderr)
    print("guest-devs:", " ".join(sorted(devs)) or "none", file=sys.stderr)
    print("guest-libs:", " ".join(sorted(libs)) or "none", file=sys.stderr)


def done():
    guest_check()
    print("seconds %.3f" % (time.time() - _t0), file=sys.stderr)
    print("failed sections:", " ".join(failed) if failed else "none", flush=True)
