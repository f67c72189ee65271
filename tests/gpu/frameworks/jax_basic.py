# JAX (jax-cuda13-plugin): XLA compiles with its own ptxas/NVVM and runs
# through the CUDA driver API (modules, launches, streams, events, graphs
# of kernels), cuBLAS, cuDNN, cuFFT, cuSOLVER. Driver mode. Default
# settings: XLA preallocates most of the GPU's memory in one allocation.
# Floating-point results are compared as statistics (near): XLA's autotuner picks
# GEMM and reduction kernels by their timing, so the last bits differ from
# run to run natively too (two native runs, 2026-11-29).
import os
import sys

import numpy as np
import jax
import jax.numpy as jnp
from common import digest, section, done


def near(x):
    """mean, root mean square and largest magnitude, 4 significant digits
    (a wrong kernel or value changes them; rounding order does not)"""
    x = np.asarray(x, dtype=np.float64)
    return "mean %.4g rms %.4g max %.4g" % (x.mean(), np.sqrt((x * x).mean()), np.abs(x).max())

jax.config.update("jax_default_matmul_precision", "highest")
section("backend", lambda: jax.default_backend())
section("devices", lambda: [d.device_kind for d in jax.devices()])
key = jax.random.PRNGKey(0)
k1, k2, k3 = jax.random.split(key, 3)
a = jax.random.normal(k1, (512, 512), dtype=jnp.float32)
b = jax.random.normal(k2, (512, 512), dtype=jnp.float32)
section("random", lambda: (digest(np.asarray(a)), digest(np.asarray(b))))
section("matmul", lambda: near(a @ b))
f = jax.jit(lambda x, y: jnp.tanh(x @ y.T).sum(axis=1) + jnp.max(x, axis=0))
section("jit", lambda: near(f(a, b)))
loss = lambda w, x: jnp.mean((jnp.tanh(x @ w) - 0.5) ** 2)
gw = jax.jit(jax.grad(loss))
section("grad", lambda: near(gw(b, a)))
def train():
    w = jnp.zeros((512, 16))
    y = jnp.sin(a[:, :16])
    step = jax.jit(lambda w: w - 0.1 * jax.grad(lambda w: jnp.mean((a @ w - y) ** 2))(w))
    for _ in range(50):
        w = step(w)
    return "%.4e" % float(jnp.mean((a @ w - y) ** 2))
section("train", train)
section("fft", lambda: near(np.abs(np.asarray(jnp.fft.fft(a[:8])))))
def conv():
    x = jax.random.normal(k3, (4, 3, 32, 32))
    k = jax.random.normal(k1, (8, 3, 3, 3))
    y = jax.lax.conv_general_dilated(x, k, (1, 1), "SAME")
    return near(y)
section("conv", conv)
section("solve", lambda: near(jnp.linalg.solve(a + 600 * jnp.eye(512), b[:, 0])))
section("sort", lambda: digest(np.asarray(jnp.sort(jax.random.randint(k3, (1 << 20,), 0, 1 << 30)))))
section("cumsum", lambda: digest(np.asarray(jnp.cumsum(jnp.arange(1 << 20, dtype=jnp.int32)))))
def scan():
    def body(c, x):
        c = c * 0.9 + x
        return c, c
    c, ys = jax.lax.scan(body, jnp.zeros(128), a[:, :128])
    return near(ys)
section("scan", scan)
def while_loop():
    return int(jax.jit(lambda n: jax.lax.while_loop(lambda s: s[0] < n, lambda s: (s[0] + 1, s[1] * 3 % 1000003), (0, 1)))(1000)[1])
section("while_loop", while_loop)
section("vmap", lambda: near(jax.vmap(lambda r: jnp.dot(r, r))(a)))
section("transfer", lambda: digest(np.asarray(jax.device_put(np.arange(1 << 24, dtype=np.float32)) * 2)))
section("stats", lambda: sorted(k for k in (jax.devices()[0].memory_stats() or {}) if k in ("bytes_limit", "bytes_in_use"))[:2])
done()
