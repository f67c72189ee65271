# A transformer block (attention, layer norm, GEMMs) trained with AdamW on
# synthetic data; the loss after every step, bitwise (hex).
import sys, time
from common import *
steps = int(sys.argv[1]) if len(sys.argv) > 1 else 200
torch.backends.cuda.enable_flash_sdp(False)   # the math path is deterministic
torch.backends.cuda.enable_mem_efficient_sdp(False)
blk = torch.nn.TransformerEncoderLayer(d_model=128, nhead=4, dim_feedforward=256, dropout=0.0,
                                       batch_first=True).cuda()
head = torch.nn.Linear(128, 16).cuda()
opt = torch.optim.AdamW(list(blk.parameters()) + list(head.parameters()), lr=1e-3)
g = torch.Generator(device="cuda").manual_seed(2)
x = torch.randn(16, 32, 128, device="cuda", generator=g)
y = torch.randint(0, 16, (16 * 32,), device="cuda", generator=g)
t0 = time.time()
for i in range(steps):
    opt.zero_grad(set_to_none=True)
    out = head(blk(x)).reshape(-1, 16)
    loss = torch.nn.functional.cross_entropy(out, y)
    loss.backward()
    opt.step()
    show("step %d" % i, float(loss).hex())
torch.cuda.synchronize()
with torch.no_grad():
    show("eval", float(head(blk(x)).sum()).hex())
print("seconds %.3f" % (time.time() - t0), file=sys.stderr)
