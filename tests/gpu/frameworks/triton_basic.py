# Triton (as PyTorch ships it) on its own: Triton compiles to cubins with
# its own ptxas, loads them with cuModuleLoadData, asks occupancy and
# shared-memory limits, sets attributes and launches through a launcher it
# builds with the host's C compiler against libcuda.so.1. Element-wise and
# reduction kernels, atomics, a matmul autotuned over configurations (each
# configuration its own module; the autotuner picks by timing, so inputs
# are small integers: every configuration gives the exact same answer),
# and tensor descriptors (TMA) where this Triton has them.
import os
import tempfile

os.environ.setdefault("TRITON_CACHE_DIR", tempfile.mkdtemp(prefix="triton-cache-"))  # compile every run
import torch
import triton
import triton.language as tl
from common import digest, section, done


def h(t):
    return digest(t.detach().cpu().contiguous().numpy())


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) * 3 + tl.load(y_ptr + offs, mask=m), mask=m)


@triton.jit
def softmax_kernel(out_ptr, in_ptr, stride, ncols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(in_ptr + row * stride + cols, mask=cols < ncols, other=-float("inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(out_ptr + row * stride + cols, e / tl.sum(e, axis=0), mask=cols < ncols)


@triton.jit
def histogram_kernel(x_ptr, hist_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    v = tl.load(x_ptr + offs, mask=offs < n, other=0)
    tl.atomic_add(hist_ptr + v, 1, mask=offs < n)


@triton.autotune(configs=[triton.Config({"BM": bm, "BN": bn, "BK": bk}, num_warps=w, num_stages=s)
                          for bm, bn, bk, w, s in [(64, 64, 32, 4, 2), (128, 64, 32, 4, 3), (64, 128, 64, 8, 3),
                                                   (128, 128, 32, 8, 4), (32, 32, 32, 2, 2)]],
                 key=["M", "N", "K"])
@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, scm, scn,
                  BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pm, pn = tl.program_id(0), tl.program_id(1)
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * sam + (k + rk)[None, :] * sak,
                    mask=(rm[:, None] < M) & ((k + rk)[None, :] < K), other=0.0)
        b = tl.load(b_ptr + (k + rk)[:, None] * sbk + rn[None, :] * sbn,
                    mask=((k + rk)[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * scm + rn[None, :] * scn, acc.to(tl.float16),
             mask=(rm[:, None] < M) & (rn[None, :] < N))


def vector_add():
    x = torch.arange(100003, device="cuda", dtype=torch.float32) / 7
    y = torch.ones_like(x)
    out = torch.empty_like(x)
    add_kernel[(triton.cdiv(x.numel(), 1024),)](x, y, out, x.numel(), BLOCK=1024)
    return h(out), bool(torch.equal(out, x * 3 + y))


def softmax():
    x = torch.randn(333, 781, device="cuda", generator=torch.Generator(device="cuda").manual_seed(2))
    out = torch.empty_like(x)
    softmax_kernel[(x.shape[0],)](out, x, x.stride(0), x.shape[1], BLOCK=1024)
    return h(out), float((out - torch.softmax(x, 1)).abs().max()) < 1e-6


def histogram():
    x = torch.randint(0, 256, (1 << 20,), device="cuda", generator=torch.Generator(device="cuda").manual_seed(3),
                      dtype=torch.int32)
    hist = torch.zeros(256, device="cuda", dtype=torch.int32)
    histogram_kernel[(triton.cdiv(x.numel(), 4096),)](x, hist, x.numel(), BLOCK=4096)
    return h(hist), bool(torch.equal(hist.long(), torch.bincount(x, minlength=256)))


def matmul():
    gen = torch.Generator(device="cuda").manual_seed(4)
    out = []
    for M, N, K in [(512, 512, 512), (1000, 777, 300)]:
        a = torch.randint(-3, 4, (M, K), device="cuda", generator=gen).half()
        b = torch.randint(-3, 4, (K, N), device="cuda", generator=gen).half()
        c = torch.empty(M, N, device="cuda", dtype=torch.float16)
        grid = lambda meta: (triton.cdiv(M, meta["BM"]), triton.cdiv(N, meta["BN"]))
        matmul_kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                            c.stride(0), c.stride(1))
        out += [h(c), bool(torch.equal(c.float(), a.float() @ b.float()))]
    return out


def descriptors():
    from triton.tools.tensor_descriptor import TensorDescriptor  # host-built TMA descriptors

    @triton.jit
    def copy_tiles(in_desc, out_desc, BM: tl.constexpr, BN: tl.constexpr):
        pm, pn = tl.program_id(0), tl.program_id(1)
        t = in_desc.load([pm * BM, pn * BN])
        out_desc.store([pm * BM, pn * BN], t * 2)

    x = torch.arange(256 * 128, device="cuda", dtype=torch.float32).reshape(256, 128)
    y = torch.zeros_like(x)
    copy_tiles[(256 // 64, 128 // 32)](TensorDescriptor.from_tensor(x, [64, 32]),
                                       TensorDescriptor.from_tensor(y, [64, 32]), BM=64, BN=32)
    return h(y), bool(torch.equal(y, x * 2))


if __name__ == "__main__":
    section("vector_add", vector_add)
    section("softmax", softmax)
    section("histogram", histogram)
    section("matmul", matmul)
    section("descriptors", descriptors)
    done()
