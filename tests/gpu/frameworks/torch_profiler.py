# PyTorch's profiler with CUDA activities: CUPTI, in the guest, subscribes to
# the driver's callbacks and activity records (private driver tables and
# the tools hooks). Natively the profile holds the GEMM's CUDA kernel
# events; forwarded, what CUPTI manages through apigen's driver stub.
import torch
from torch.profiler import profile, ProfilerActivity
from common import digest, section, done


def profiler():
    g = torch.Generator(device="cuda").manual_seed(1)
    x = torch.randn(512, 512, device="cuda", generator=g)
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for _ in range(3):
            y = x @ x
        torch.cuda.synchronize()
    events = prof.events()
    kinds = set(str(e.device_type) for e in events)
    return (digest(y.cpu().numpy()), "DeviceType.CUDA" in kinds, any("mm" in e.name for e in events))


if __name__ == "__main__":
    section("profiler", profiler)
    section("after", lambda: float(torch.ones(1000, device="cuda").sum()))
    done()
