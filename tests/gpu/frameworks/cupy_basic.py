# CuPy (cupy-cuda13x): arrays, NVRTC-compiled raw/elementwise/reduction
# kernels, cuBLAS, cuFFT, cuRAND, CUB sort/scan, cuSOLVER, cuSPARSE, streams
# and events, pinned host memory, the memory pool. Driver mode: CuPy's own
# CUDA runtime and libraries run in the guest over apigen's driver stub.
import os
import sys
import tempfile

os.environ.setdefault("CUPY_CACHE_DIR", tempfile.mkdtemp(prefix="cupy-cache-"))  # compile every run
import numpy as np
import cupy as cp
import cupyx
import cupyx.scipy.sparse as sp
from common import digest, section, done

g = cp.asnumpy
section("devices", lambda: cp.cuda.runtime.getDeviceCount())
section("name", lambda: cp.cuda.runtime.getDeviceProperties(0)["name"].decode())
section("cc", lambda: cp.cuda.Device(0).compute_capability)
section("arange", lambda: (float(cp.arange(1 << 20, dtype=cp.float64).sum()), digest(g(cp.arange(1000, dtype=cp.float32) * 2 + 1))))
rs = cp.random.RandomState(seed=1)
a = rs.rand(512, 512, dtype=cp.float32)
b = rs.rand(512, 512, dtype=cp.float32)
section("random", lambda: (digest(g(a)), digest(g(b))))
section("matmul", lambda: digest(g(a @ b)))
section("matmul64", lambda: digest(g(a.astype(cp.float64) @ b.astype(cp.float64))))
section("fft", lambda: digest(g(cp.fft.fft(a[:8]))))
section("rfft2", lambda: digest(g(cp.fft.rfft2(a))))
ints = rs.randint(0, 1 << 30, 1 << 20)
section("sort", lambda: digest(g(cp.sort(ints))))
section("argsort", lambda: digest(g(cp.argsort(ints))))
section("cumsum", lambda: digest(g(cp.cumsum(ints))))
section("unique", lambda: int(cp.unique(ints % 1000).size))
sq = cp.RawKernel(r'''
extern "C" __global__ void sq(const float *x, float *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] * x[i] + 0.5f;
}''', "sq")
def raw():
    x = cp.arange(1 << 20, dtype=cp.float32) / 7
    y = cp.empty_like(x)
    sq(((x.size + 255) // 256,), (256,), (x, y, cp.int32(x.size)))
    return digest(g(y))
section("rawkernel", raw)
mod = cp.RawModule(code=r'''
template<typename T> __global__ void axpy(T a, const T *x, T *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] += a * x[i];
}
__constant__ float scale[4];
extern "C" __global__ void scaled(float *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] *= scale[i % 4];
}''', name_expressions=["axpy<float>", "axpy<double>"])
def module():
    x = cp.arange(4096, dtype=cp.float64)
    y = cp.ones(4096, dtype=cp.float64)
    mod.get_function("axpy<double>")((16,), (256,), (cp.float64(2.5), x, y, cp.int32(4096)))
    c = mod.get_global("scale")
    cp.ndarray((4,), cp.float32, c).set(np.array([1, 2, 3, 4], np.float32))
    z = cp.ones(4096, dtype=cp.float32)
    mod.get_function("scaled")((16,), (256,), (z, cp.int32(4096)))
    return digest(g(y)), digest(g(z))
section("rawmodule", module)
ew = cp.ElementwiseKernel("float32 x, float32 y", "float32 z", "z = x * y + sinf(x)", "ew")
section("elementwise", lambda: digest(g(ew(a, b))))
l2 = cp.ReductionKernel("float32 x", "float64 y", "x * x", "a + b", "y = sqrt(a)", "0", "l2")
section("reduction", lambda: float(l2(a)))
section("solve", lambda: digest(g(cp.linalg.solve(a.astype(cp.float64) + 512 * cp.eye(512), b[:, 0].astype(cp.float64)))))
section("inv", lambda: digest(g(cp.linalg.inv(a.astype(cp.float64) + 512 * cp.eye(512)))))
section("svdvals", lambda: np.round(g(cp.linalg.svd(a[:64, :64], compute_uv=False))[:3], 3).tolist())
section("eigh", lambda: np.round(g(cp.linalg.eigh(a[:64, :64] + a[:64, :64].T)[0])[-3:], 3).tolist())
def sparse():
    m = sp.random(2000, 2000, density=0.01, format="csr", dtype=cp.float64, random_state=3)
    v = cp.arange(2000, dtype=cp.float64)
    return digest(g(m @ v)), digest(g((m @ m.T).toarray()))
section("sparse", sparse)
def streams():
    s1 = cp.cuda.Stream(non_blocking=True)
    s2 = cp.cuda.Stream()
    e = cp.cuda.Event()
    with s1:
        x = cp.arange(1 << 22, dtype=cp.float32)
        x *= 3
        e.record(s1)
    s2.wait_event(e)
    with s2:
        y = x + 1
    s2.synchronize()
    t0, t1 = cp.cuda.Event(), cp.cuda.Event()
    t0.record(); (x * 2).sum(); t1.record(); t1.synchronize()
    ms = cp.cuda.get_elapsed_time(t0, t1)
    return digest(g(y)), ms >= 0, s1.done
section("streams", streams)
def pinned():
    # d comes from CuPy's pool, which reuses blocks by the legacy stream's
    # order, and s does not wait for that stream: finish the earlier
    # sections' work first (a failed section upstream left the block in use
    # once: session 29, call 2)
    cp.cuda.Device().synchronize()
    h = cupyx.empty_pinned((1 << 22,), dtype=np.float32)
    h[:] = np.arange(h.size, dtype=np.float32)
    s = cp.cuda.Stream(non_blocking=True)
    d = cp.empty(h.shape, dtype=np.float32)
    d.set(h, stream=s)
    with s:  # on s: a non-blocking stream does not wait for the legacy default stream
        d *= 2
    out = cupyx.empty_pinned(h.shape, dtype=np.float32)
    d.get(stream=s, out=out)
    s.synchronize()
    return digest(out)
section("pinned", pinned)
def pool():
    p = cp.get_default_memory_pool()
    x = cp.zeros(1 << 24, dtype=cp.uint8)
    used = p.used_bytes()
    del x
    free, total = cp.cuda.runtime.memGetInfo()
    return used, free > 0 and total > free
section("pool", pool)
section("asnumpy_large", lambda: digest(g(cp.arange(1 << 25, dtype=cp.float32))))
done()
