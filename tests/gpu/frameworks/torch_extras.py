# PyTorch beyond the training loops of tests/gpu/torch: what programs do
# around them. Device properties and memory accounting, cuFFT, cuSOLVER
# (torch.linalg), cuSPARSE, mixed precision with a gradient scaler, NVRTC
# (jiterator), sorting and sampling, events and two streams, a checkpoint
# saved and loaded, a DataLoader with worker processes and pinned batches, a
# CUDA tensor sent to a spawned process (CUDA IPC). Values bitwise (sparse
# matrix products against the dense one). The profiler: torch_profiler.py.
import io
import os

os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
import torch
from common import digest, section, done


def h(t):
    return digest(t.detach().cpu().contiguous().numpy())


def props():
    p = torch.cuda.get_device_properties(0)
    return (torch.cuda.device_count(), p.name, p.major, p.minor, p.multi_processor_count,
            p.total_memory, torch.cuda.get_device_capability())


def meminfo():
    free, total = torch.cuda.mem_get_info()
    return (total == torch.cuda.get_device_properties(0).total_memory, 0 < free <= total)


def memstats():
    torch.cuda.synchronize()
    before = torch.cuda.memory_allocated()
    x = torch.empty(16 << 20, dtype=torch.float32, device="cuda")
    grew = torch.cuda.memory_allocated() - before
    del x
    torch.cuda.empty_cache()
    return (grew, torch.cuda.memory_allocated() == before, torch.cuda.max_memory_allocated() >= grew)


def fft(a):
    return (h(torch.fft.fft(a[:8])), h(torch.fft.rfft2(a.float())), h(torch.fft.ifft(torch.fft.fft(a[0]))))


def linalg(a, b):
    spd = a @ a.T + 256 * torch.eye(256, device="cuda", dtype=torch.float64)
    return (h(torch.linalg.solve(spd, b[:, :4])), h(torch.linalg.cholesky(spd)), h(torch.linalg.inv(spd)),
            h(torch.linalg.eigvalsh(spd)), h(torch.linalg.qr(a).R))


def sparse(a, b):
    # matrix products through cuSPARSE sum in no fixed order (two native runs
    # differ in the last bits): compared with the dense product; the
    # matrix-vector product is bitwise
    d = torch.where(a > 1.0, a, torch.zeros_like(a))
    s = d.to_sparse_csr()
    near = lambda x: bool(torch.allclose(x, d @ b, rtol=1e-12, atol=1e-12))
    return (int(s.values().numel()), near(torch.sparse.mm(d.to_sparse(), b)), near(s @ b), h(s @ b[:, 0]))


def amp():
    torch.manual_seed(3)
    model = torch.nn.Sequential(torch.nn.Linear(128, 256), torch.nn.GELU(), torch.nn.Linear(256, 10)).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    scaler = torch.amp.GradScaler("cuda", init_scale=2.0 ** 16)
    x = torch.randn(64, 128, device="cuda")
    y = torch.randint(0, 10, (64,), device="cuda")
    losses = []
    for _ in range(20):
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.float16):
            loss = torch.nn.functional.cross_entropy(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        losses.append(loss.float())
    return (float(torch.stack(losses).double().sum()).hex(), scaler.get_scale())


def jiterator():
    f = torch.cuda.jiterator._create_jit_fn("template <typename T> T fma1(T x, T y) { return x * y + T(1); }")
    x = torch.arange(4096, device="cuda", dtype=torch.float32) / 3
    return h(f(x, x.flip(0)))


def sampling(g):
    x = torch.rand(1 << 16, device="cuda", generator=g)
    _, i = torch.topk(x, 100)
    probs = torch.softmax(x[:1000], 0)
    return (h(torch.sort(x).values), h(i), h(torch.multinomial(probs, 50, generator=g)),
            h(torch.unique(torch.randint(0, 500, (10000,), device="cuda", generator=g))))


def streams(a, b):
    s1, s2 = torch.cuda.Stream(), torch.cuda.Stream()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    with torch.cuda.stream(s1):
        p = a @ b
        e = torch.cuda.Event()
        e.record(s1)
    with torch.cuda.stream(s2):
        s2.wait_event(e)
        q = torch.tanh(p) * 2
    torch.cuda.current_stream().wait_stream(s2)
    end.record()
    end.synchronize()
    return (h(q), start.elapsed_time(end) > 0, s1.query(), e.query())


def checkpoint(a, g):
    model = torch.nn.Linear(64, 32).cuda()
    buf = io.BytesIO()
    torch.save({"model": model.state_dict(), "t": a[:4]}, buf)
    buf.seek(0)
    back = torch.load(buf, map_location="cuda")
    m2 = torch.nn.Linear(64, 32).cuda()
    m2.load_state_dict(back["model"])
    x = torch.randn(8, 64, device="cuda", generator=g)
    return (bool(torch.equal(back["t"], a[:4])), bool(torch.equal(model(x), m2(x))), back["t"].device.type)


def loader():
    from torch.utils.data import DataLoader, TensorDataset
    ds = TensorDataset(torch.arange(4096, dtype=torch.float32).reshape(512, 8))
    dl = DataLoader(ds, batch_size=64, num_workers=2, pin_memory=True, shuffle=False)
    acc = torch.zeros(8, device="cuda", dtype=torch.float64)
    pinned = True
    for (batch,) in dl:
        pinned = pinned and batch.is_pinned()
        acc += batch.to("cuda", non_blocking=True).double().sum(0)
    return (pinned, h(acc))


def ipc_child(q, r):
    t = q.get()
    r.put(float((t * 2 + 1).double().sum()))
    t.add_(1)  # the parent's memory: the parent reads it after "done"
    torch.cuda.synchronize()
    r.put("done")


def ipc():
    import torch.multiprocessing as mp
    ctx = mp.get_context("spawn")
    q, r = ctx.Queue(), ctx.Queue()
    p = ctx.Process(target=ipc_child, args=(q, r))
    p.start()
    t = torch.arange(1000, dtype=torch.float32, device="cuda")
    q.put(t)
    got = r.get(timeout=120)
    fin = r.get(timeout=120)
    p.join(120)
    return (got, fin, float(t.double().sum()), p.exitcode)


if __name__ == "__main__":  # not in the spawned child, which imports this file
    torch.manual_seed(0)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.use_deterministic_algorithms(True)
    section("props", props)
    section("mem_get_info", meminfo)
    section("memstats", memstats)
    g = torch.Generator(device="cuda").manual_seed(1)
    a = torch.randn(256, 256, device="cuda", generator=g, dtype=torch.float64)
    b = torch.randn(256, 256, device="cuda", generator=g, dtype=torch.float64)
    section("random", lambda: (h(a), h(b)))
    section("fft", lambda: fft(a))
    section("linalg", lambda: linalg(a, b))
    section("sparse", lambda: sparse(a, b))
    section("amp", amp)
    section("jiterator", jiterator)
    section("sampling", lambda: sampling(g))
    section("streams", lambda: streams(a, b))
    section("checkpoint", lambda: checkpoint(a, g))
    section("dataloader", loader)
    section("ipc", ipc)
    done()
