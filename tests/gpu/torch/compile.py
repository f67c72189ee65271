# torch.compile of a small function (Inductor generates Triton kernels:
# Triton compiles them with ptxas and loads them through the driver API, so
# forwarded they must reach the server's GPU, never a local one). Values
# printed as hex floats: compiled == eager == native, bitwise.
import sys
import torch
torch.manual_seed(0)
def f(x, y):
    return torch.sin(x) * torch.cos(y) + (x * y).relu().sum(dim=1, keepdim=True)
x = torch.randn(256, 512, device="cuda")
y = torch.randn(256, 512, device="cuda")
g = torch.compile(f)
a = g(x, y)
b = f(x, y)
torch.cuda.synchronize()
print("compiled == eager:", bool(torch.equal(a, b)))
print("sum", float(a.double().sum()).hex(), "first", float(a[0, 0]).hex())
