# numba-cuda: kernels compiled by NVVM and loaded through the driver API
# (cuda-python's bindings), device arrays, shared memory, atomics, streams,
# events, pinned and mapped host memory. Driver mode.
import sys

import numpy as np
from numba import cuda, float32, int32
from common import digest, section, done

@cuda.jit
def saxpy(a, x, y, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a * x[i] + y[i]

@cuda.jit
def block_sum(x, out):
    s = cuda.shared.array(256, dtype=float32)
    i = cuda.grid(1)
    t = cuda.threadIdx.x
    s[t] = x[i] if i < x.size else 0
    cuda.syncthreads()
    step = 128
    while step > 0:
        if t < step:
            s[t] += s[t + step]
        cuda.syncthreads()
        step //= 2
    if t == 0:
        out[cuda.blockIdx.x] = s[0]

@cuda.jit
def histogram(x, bins):
    i = cuda.grid(1)
    if i < x.size:
        cuda.atomic.add(bins, x[i] % bins.size, 1)

@cuda.jit
def scale_inplace(x, f):
    i = cuda.grid(1)
    if i < x.size:
        x[i] *= f

n = 1 << 20
x = np.arange(n, dtype=np.float32) / 3
y = np.ones(n, dtype=np.float32)
section("gpus", lambda: [g.name.decode() if isinstance(g.name, bytes) else g.name for g in cuda.gpus])
section("cc", lambda: cuda.get_current_device().compute_capability)
def do_saxpy():
    dx, dy = cuda.to_device(x), cuda.to_device(y)
    out = cuda.device_array_like(dx)
    saxpy[(n + 255) // 256, 256](np.float32(2.5), dx, dy, out)
    return digest(out.copy_to_host())
section("saxpy", do_saxpy)
def do_sum():
    out = cuda.device_array((n + 255) // 256, dtype=np.float32)
    block_sum[(n + 255) // 256, 256](cuda.to_device(x), out)
    return digest(out.copy_to_host())
section("shared", do_sum)
def do_hist():
    bins = cuda.to_device(np.zeros(97, dtype=np.int32))
    v = (np.arange(n, dtype=np.int64) * 2654435761 % 1000003).astype(np.int32)
    histogram[(n + 255) // 256, 256](cuda.to_device(v), bins)
    return digest(bins.copy_to_host())
section("atomics", do_hist)
def do_stream():
    s = cuda.stream()
    h = cuda.pinned_array(n, dtype=np.float32)
    h[:] = x
    d = cuda.to_device(h, stream=s)
    scale_inplace[(n + 255) // 256, 256, s](d, np.float32(4))
    d.copy_to_host(h, stream=s)
    e0, e1 = cuda.event(), cuda.event()
    e0.record(s); e1.record(s)
    s.synchronize()
    return digest(h), cuda.event_elapsed_time(e0, e1) >= 0
section("stream_pinned", do_stream)
def do_mapped():
    m = cuda.mapped_array(4096, dtype=np.float32)
    m[:] = np.arange(4096, dtype=np.float32)
    scale_inplace[16, 256](m, np.float32(0.5))
    cuda.synchronize()
    return digest(np.array(m))
section("mapped", do_mapped)
def do_managed():
    m = cuda.managed_array(4096, dtype=np.float32)
    m[:] = 1
    scale_inplace[16, 256](m, np.float32(3))
    cuda.synchronize()
    return float(np.asarray(m).sum())
section("managed", do_managed)
section("meminfo", lambda: (lambda f_t: f_t[0] > 0 and f_t[1] >= f_t[0])(cuda.current_context().get_memory_info()))
done()
