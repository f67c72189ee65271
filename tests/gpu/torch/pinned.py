# What a training input pipeline does with pinned memory (DataLoader's
# pin_memory=True): batches pinned on the host, copied to the device with
# non_blocking=True on a side stream, used there after an event; results
# copied back into pinned tensors without blocking and read after a
# synchronize; pinned memory freed and reused by the caching host allocator.
# The argument is the number of batches.
import sys
import torch
from common import show
steps = int(sys.argv[1]) if len(sys.argv) > 1 else 50
torch.manual_seed(0)
copy_stream = torch.cuda.Stream()
w = torch.randn(256, 256, device="cuda")
acc = torch.zeros(256, device="cuda")
back = torch.empty(256, pin_memory=True)
total = 0.0
for i in range(steps):
    host = torch.randn(64, 256).pin_memory()          # a new pinned block each batch
    with torch.cuda.stream(copy_stream):
        dev = host.to("cuda", non_blocking=True)
        ev = torch.cuda.Event()
        ev.record(copy_stream)
    torch.cuda.current_stream().wait_event(ev)
    dev.record_stream(torch.cuda.current_stream())
    acc += torch.tanh(dev @ w).sum(0)
    if i % 10 == 9:
        back.copy_(acc, non_blocking=True)                # into pinned memory, asynchronously
        torch.cuda.current_stream().synchronize()
        total += float(back.double().sum())
torch.cuda.synchronize()
show("pinned batches %d: checksum" % steps, "%.6e %.6e" % (total, float(acc.double().sum())))
show("pinned: is_pinned", (back.is_pinned(), host.is_pinned()))
