# A small CNN (conv, batch norm, pooling, linear: cuDNN and cuBLAS) trained
# with AdamW on synthetic data; the loss after every step, bitwise (hex).
import sys, time
from common import *
steps = int(sys.argv[1]) if len(sys.argv) > 1 else 200
m = torch.nn.Sequential(
    torch.nn.Conv2d(3, 16, 3, padding=1), torch.nn.BatchNorm2d(16), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
    torch.nn.Conv2d(16, 32, 3, padding=1), torch.nn.BatchNorm2d(32), torch.nn.ReLU(), torch.nn.AdaptiveAvgPool2d(1),
    torch.nn.Flatten(), torch.nn.Linear(32, 10)).cuda()
opt = torch.optim.AdamW(m.parameters(), lr=1e-3)
g = torch.Generator(device="cuda").manual_seed(1)
x = torch.randn(64, 3, 32, 32, device="cuda", generator=g)
y = torch.randint(0, 10, (64,), device="cuda", generator=g)
t0 = time.time()
for i in range(steps):
    opt.zero_grad(set_to_none=True)
    loss = torch.nn.functional.cross_entropy(m(x), y)
    loss.backward()
    opt.step()
    show("step %d" % i, float(loss).hex())
torch.cuda.synchronize()
m.eval()
with torch.no_grad():
    show("eval", float(m(x).sum()).hex())
print("seconds %.3f" % (time.time() - t0), file=sys.stderr)
