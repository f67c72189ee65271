# torch.cuda.CUDAGraph: a small MLP's forward captured once on PyTorch's side
# stream and replayed on new inputs, values bitwise; and the capture query
# PyTorch answers (torch.cuda.is_current_stream_capturing) before, during
# and after the capture. Forwarded, the runtime's stub answers that query in
# the guest only while no capture was ever begun in the process, and asks
# the server from then on (specs/cudart/guest.c).
#   cuda_graph.py REPLAYS (at most 20)
import sys
from common import *
replays = min(int(sys.argv[1]) if len(sys.argv) > 1 else 5, 20)
model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 16)).cuda().eval()
static_in = torch.randn(32, 64, device="cuda")
show("capturing before", torch.cuda.is_current_stream_capturing())
side = torch.cuda.Stream()
side.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(side), torch.no_grad():
    for _ in range(3):  # warm-up on a side stream, as PyTorch's documentation does
        model(static_in)
torch.cuda.current_stream().wait_stream(side)
g = torch.cuda.CUDAGraph()
during = []
with torch.no_grad(), torch.cuda.graph(g):
    during.append(torch.cuda.is_current_stream_capturing())
    static_out = model(static_in)
show("capturing during", during[0])
show("capturing after", torch.cuda.is_current_stream_capturing())
for i in range(replays):
    static_in.copy_(torch.randn(32, 64, device="cuda"))
    g.replay()
    show("replay %d" % i, float(static_out.double().sum()).hex())
with torch.no_grad():
    show("eager", float(model(static_in).double().sum()).hex())
