# torch.distributed over NCCL, one process per GPU (every GPU of the machine,
# at least 2 for the point-to-point sections): collectives of several kinds,
# an all-reduce captured in a CUDA graph and replayed, one that waits for a
# late peer, and a DistributedDataParallel training loop. Rank 0 prints a digest per
# section (every rank holds the same results where a collective makes them
# equal) and the time. Library mode forwards NCCL itself (apigen's
# libnccl.so.2: the ranks' NCCL runs on the server); driver mode runs
# NVIDIA's NCCL in each rank over the driver stub.
#   python3 torch_ddp.py [STEPS]   (WORLD=n: n ranks instead of the GPU count)
import os
import sys
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402


def dg(t):
    return common.digest(t.detach().cpu().contiguous().view(torch.uint8).numpy())


def run(rank, world, port, steps):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    torch.cuda.set_device(rank)
    dev = torch.device("cuda", rank)
    out = common.section if rank == 0 else (lambda name, fn: fn())

    def init():
        dist.init_process_group("nccl", rank=rank, world_size=world, device_id=dev)
        return "world %d nccl %s" % (dist.get_world_size(), ".".join(map(str, torch.cuda.nccl.version())))
    out("init", init)

    def all_reduce():
        x = torch.arange(1 << 20, device=dev, dtype=torch.float32) * (rank + 1)
        dist.all_reduce(x)
        y = torch.full((4097,), float(rank + 2), device=dev, dtype=torch.float64)
        dist.all_reduce(y, op=dist.ReduceOp.MAX)
        z = torch.arange(1000, device=dev, dtype=torch.int64) + rank
        dist.all_reduce(z, op=dist.ReduceOp.MIN)
        w = torch.arange(3000, device=dev, dtype=torch.bfloat16) * (rank + 1)
        dist.all_reduce(w, op=dist.ReduceOp.AVG)
        return " ".join(dg(t) for t in (x, y, z, w))
    out("all_reduce", all_reduce)

    def broadcast():
        y = torch.full((1000,), float(rank), device=dev)
        dist.broadcast(y, src=world - 1)
        return dg(y)
    out("broadcast", broadcast)

    def gathers():
        g = [torch.empty(4096, device=dev) for _ in range(world)]
        src = torch.randn(4096, device=dev, generator=torch.Generator(dev).manual_seed(rank))
        dist.all_gather(g, src)
        t = torch.empty(4096 * world, device=dev)
        dist.all_gather_into_tensor(t, src)
        rs = torch.empty(1024, device=dev)
        dist.reduce_scatter_tensor(rs, torch.ones(1024 * world, device=dev) * (rank + 1))
        a2a = torch.empty(256 * world, device=dev)
        dist.all_to_all_single(a2a, torch.arange(256 * world, device=dev, dtype=torch.float32) + 1000 * rank)
        return " ".join(dg(x) for x in (torch.cat(g), t, rs, a2a))
    out("gathers", gathers)

    def point_to_point():
        if world < 2:
            return "one rank"
        nxt, prv = (rank + 1) % world, (rank - 1) % world
        send = torch.arange(777, device=dev, dtype=torch.float32) + rank
        recv = torch.empty(777, device=dev)
        for r in dist.batch_isend_irecv([dist.P2POp(dist.isend, send, nxt), dist.P2POp(dist.irecv, recv, prv)]):
            r.wait()
        if rank == 0:
            dist.send(torch.arange(77., device=dev), dst=1)
            other = torch.zeros(1)
        elif rank == 1:
            other = torch.empty(77, device=dev)
            dist.recv(other, src=0)
        else:
            other = torch.zeros(1)
        dist.barrier()
        return dg(recv) + " " + dg(other.to(dev))
    out("point_to_point", point_to_point)

    def subgroup():
        grp = dist.new_group([0]) if world < 2 else dist.new_group(list(range(0, world, 2)))
        x = torch.ones(100, device=dev) * (rank + 1)
        if rank % 2 == 0:
            dist.all_reduce(x, group=grp)
        return dg(x)
    out("subgroup", subgroup)

    def late_peer():
        # the last rank joins late: the others' kernels spin, reading NCCL's
        # abort flag (mapped host memory, its address kept in device memory)
        x = torch.ones(1 << 16, device=dev) * (rank + 1)
        dist.barrier()
        torch.cuda.synchronize()
        if rank == world - 1:
            time.sleep(0.5)
        dist.all_reduce(x)
        torch.cuda.synchronize()
        return dg(x)
    out("late_peer", late_peer)

    def graph():
        # an all-reduce captured in a CUDA graph and replayed, as inference
        # engines run tensor-parallel layers
        x = torch.zeros(4096, device=dev)
        s = torch.cuda.Stream(device=dev)
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for _ in range(2):  # warm-up outside the capture
                x.fill_(rank + 1)
                dist.all_reduce(x)
        torch.cuda.current_stream().wait_stream(s)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            x.add_(1)
            dist.all_reduce(x)
        outs = []
        for i in range(3):
            x.fill_(float(i + rank))
            g.replay()
            outs.append(x.clone())
        torch.cuda.synchronize()
        return dg(torch.cat(outs))
    out("graph", graph)

    def ddp():
        torch.manual_seed(0)
        m = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(), torch.nn.Linear(512, 10)).to(dev)
        model = torch.nn.parallel.DistributedDataParallel(m, device_ids=[rank], bucket_cap_mb=1)
        opt = torch.optim.SGD(model.parameters(), lr=0.01)
        gen = torch.Generator(dev).manual_seed(100 + rank)
        torch.cuda.synchronize()
        t0 = time.time()
        for _ in range(steps):
            xb = torch.randn(64, 256, device=dev, generator=gen)
            yb = torch.randint(0, 10, (64,), device=dev, generator=gen)
            loss = torch.nn.functional.cross_entropy(model(xb), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
        torch.cuda.synchronize()
        if rank == 0:
            print("ddp-seconds %.3f" % (time.time() - t0), file=sys.stderr)
        params = torch.cat([p.detach().flatten() for p in m.parameters()])
        same = [torch.empty_like(params) for _ in range(world)]
        dist.all_gather(same, params)
        agree = all(torch.equal(same[0], s) for s in same)
        return "%s loss %s ranks agree %s" % (dg(params), float(loss.detach()).hex(), agree)
    out("ddp", ddp)

    dist.barrier()
    dist.destroy_process_group()
    if rank == 0:
        common.done()


if __name__ == "__main__":
    world = int(os.environ.get("WORLD", torch.cuda.device_count()))
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 50
    mp.spawn(run, args=(world, 29500 + os.getpid() % 5000, steps), nprocs=world)
