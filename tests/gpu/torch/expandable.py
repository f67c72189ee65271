# PyTorch's caching allocator on expandable segments: it grows one virtual
# range with cuMemAddressReserve / cuMemCreate / cuMemMap / cuMemSetAccess
# (the driver's virtual memory calls) instead of cuMemAlloc. Tensors of
# growing sizes, freed and reallocated, a few MLP training steps; every
# value bitwise (hex), and the allocator's own statistics.
import os, sys
os.environ["PYTORCH_CUDA_ALLOC_CONF"] = "expandable_segments:True"
from common import *
steps = int(sys.argv[1]) if len(sys.argv) > 1 else 200
keep = []
for k in range(12):
    t = torch.full((1 << (10 + k),), float(k + 1), device="cuda")
    keep.append(t)
    if k % 3 == 2:
        keep.pop(0)
    show("tensors %d" % k, float(sum(x.sum() for x in keep)).hex())
del keep
torch.cuda.empty_cache()
m = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(), torch.nn.Linear(512, 10)).cuda()
opt = torch.optim.AdamW(m.parameters(), lr=1e-3)
g = torch.Generator(device="cuda").manual_seed(1)
x = torch.randn(128, 256, device="cuda", generator=g)
y = torch.randint(0, 10, (128,), device="cuda", generator=g)
for i in range(min(steps, 50)):
    opt.zero_grad(set_to_none=True)
    big = torch.randn(1 << (16 + i % 6), device="cuda", generator=g)  # grows and shrinks the segment
    loss = torch.nn.functional.cross_entropy(m(x), y) + 0 * big.sum()
    loss.backward()
    opt.step()
    show("step %d" % i, float(loss).hex())
torch.cuda.synchronize()
st = torch.cuda.memory_stats()
show("segments mapped", st.get("num_alloc_retries", 0) == 0)
show("expandable in use", "expandable_segments:True" in os.environ["PYTORCH_CUDA_ALLOC_CONF"])
