# bench/torch_step.py: time PyTorch training steps the way a user does,
# natively or through apigen's stubs (bench/torch-step.sh runs both).
#
#   python3 bench/torch_step.py CASE STEPS [WARMUP]
#
# CASE: cnn (conv, batch norm, pooling, linear: cuDNN and cuBLAS) or
# transformer (attention, layer norm, GEMMs: cuBLASLt), trained with AdamW on
# synthetic data, deterministic, the loss read back every step as training
# loops do. WARMUP steps (default 20) run untimed first. Prints one line:
#   step CASE median_ms M mean_ms A p90_ms P cpu_ms C server_ms S server_calls N loss HEX
# cpu_ms: this process's CPU time per timed step (all threads). With
# APIGEN_BENCH_METRICS=http://HOST:PORT/metrics (the server's --metrics),
# server_ms and server_calls are the server's handler time and calls per
# timed step, from the metrics scraped before and after the timed steps,
# and the functions with the most handler time follow on "top" lines.
import os, re, sys, time, urllib.request

os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
import torch

case = sys.argv[1]
steps = int(sys.argv[2])
warmup = int(sys.argv[3]) if len(sys.argv) > 3 else 20
torch.manual_seed(0)
torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False
torch.backends.cudnn.benchmark = False
torch.use_deterministic_algorithms(True)

g = torch.Generator(device="cuda").manual_seed(1)
# TORCH_STEP_BATCH_CNN / _TRANSFORMER set one case's batch, TORCH_STEP_BATCH both
batch = int(os.environ.get("TORCH_STEP_BATCH_" + case.upper(), os.environ.get("TORCH_STEP_BATCH", "0")))
if case == "cnn":
    model = torch.nn.Sequential(
        torch.nn.Conv2d(3, 16, 3, padding=1), torch.nn.BatchNorm2d(16), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
        torch.nn.Conv2d(16, 32, 3, padding=1), torch.nn.BatchNorm2d(32), torch.nn.ReLU(),
        torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(32, 10)).cuda()
    n = batch or 64
    x = torch.randn(n, 3, 32, 32, device="cuda", generator=g)
    y = torch.randint(0, 10, (n,), device="cuda", generator=g)
    forward = lambda: model(x)
elif case == "transformer":
    torch.backends.cuda.enable_flash_sdp(False)  # the math path is deterministic
    torch.backends.cuda.enable_mem_efficient_sdp(False)
    blk = torch.nn.TransformerEncoderLayer(d_model=128, nhead=4, dim_feedforward=256, dropout=0.0,
                                           batch_first=True).cuda()
    head = torch.nn.Linear(128, 16).cuda()
    model = torch.nn.Sequential(blk, head)
    n = batch or 16
    x = torch.randn(n, 32, 128, device="cuda", generator=g)
    y = torch.randint(0, 16, (n * 32,), device="cuda", generator=g)
    forward = lambda: model(x).reshape(-1, 16)
else:
    sys.exit("torch_step.py: CASE is cnn or transformer, not '%s'" % case)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)


def step():
    opt.zero_grad(set_to_none=True)
    loss = torch.nn.functional.cross_entropy(forward(), y)
    loss.backward()
    opt.step()
    return float(loss)  # a copy back and a wait, as every training loop's logging does


metrics_url = os.environ.get("APIGEN_BENCH_METRICS")


def scrape():
    """{function: (calls, handler seconds)} from the server's metrics."""
    if not metrics_url:
        return {}
    text = urllib.request.urlopen(metrics_url, timeout=10).read().decode()
    out = {}
    pat = re.compile(r'^apigen_call_duration_seconds_(sum|count)\{api="([^"]*)",function="([^"]*)"\} (\S+)$')
    for line in text.splitlines():
        m = pat.match(line)
        if m:
            key = m.group(2) + "." + m.group(3)
            calls, secs = out.get(key, (0, 0.0))
            if m.group(1) == "sum":
                secs = float(m.group(4))
            else:
                calls = int(float(m.group(4)))
            out[key] = (calls, secs)
    return out


for _ in range(warmup):
    step()
torch.cuda.synchronize()
before = scrape()
cpu0 = time.process_time()
times = []
for _ in range(steps):
    t = time.perf_counter()
    loss = step()
    times.append(time.perf_counter() - t)
cpu = time.process_time() - cpu0
after = scrape()

times.sort()
median = times[len(times) // 2] * 1e3
mean = sum(times) / len(times) * 1e3
p90 = times[int(len(times) * 0.9)] * 1e3
per = {}
for k, (c, s) in after.items():
    c0, s0 = before.get(k, (0, 0.0))
    if c > c0:
        per[k] = ((c - c0) / steps, (s - s0) / steps * 1e3)
server_ms = sum(v[1] for v in per.values())
server_calls = sum(v[0] for v in per.values())
print("step %s median_ms %.3f mean_ms %.3f p90_ms %.3f cpu_ms %.3f server_ms %s server_calls %s loss %s" %
      (case, median, mean, p90, cpu / steps * 1e3, "%.3f" % server_ms if metrics_url else "-",
       "%.1f" % server_calls if metrics_url else "-", loss.hex()))
for k, (c, ms) in sorted(per.items(), key=lambda kv: -kv[1][1])[:12]:
    print("top %s calls %.1f ms %.4f us_each %.2f" % (k, c, ms, ms * 1e3 / c))
