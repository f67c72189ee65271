# A small MLP's forward and backward (cuBLASLt GEMMs with bias epilogues).
import torch
torch.manual_seed(0)
torch.backends.cuda.matmul.allow_tf32 = False
torch.use_deterministic_algorithms(True)
m = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10)).cuda()
inp = torch.randn(32, 64, device="cuda")
tgt = torch.randint(0, 10, (32,), device="cuda")
loss = torch.nn.functional.cross_entropy(m(inp), tgt)
loss.backward()
torch.cuda.synchronize()
print("mlp %.6e %.6e" % (float(loss), float(m[0].weight.grad.sum())))
