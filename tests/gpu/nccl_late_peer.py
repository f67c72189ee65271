# tests/gpu/nccl_late_peer.py (a probe for machines with two GPUs): an NCCL
# all-reduce whose kernel waits long for its peer (rank 1 arrives DELAY
# seconds late), so NCCL's kernel reads its abort flag (mapped host memory,
# through a pointer kept in device memory) while it spins. Rank 0 prints the
# sum (native: 196608.0). torch_ddp.py's late_peer section does the same.
#   python3 tests/gpu/nccl_late_peer.py [DELAY]
import os, sys, time
import torch, torch.distributed as dist, torch.multiprocessing as mp
def run(rank, world, port, delay):
    os.environ["MASTER_ADDR"] = "127.0.0.1"; os.environ["MASTER_PORT"] = str(port)
    torch.cuda.set_device(rank); dev = torch.device("cuda", rank)
    dist.init_process_group("nccl", rank=rank, world_size=world, device_id=dev)
    x = torch.ones(1 << 16, device=dev) * (rank + 1)
    dist.all_reduce(x); torch.cuda.synchronize()
    dist.barrier()
    if rank == 1: time.sleep(delay)
    x = torch.ones(1 << 16, device=dev) * (rank + 1)
    dist.all_reduce(x); torch.cuda.synchronize()
    if rank == 0: print("late peer all_reduce", float(x.sum()), flush=True)
    dist.barrier(); dist.destroy_process_group()
if __name__ == "__main__":
    delay = float(sys.argv[1]) if len(sys.argv) > 1 else 1.0
    mp.spawn(run, args=(2, 29500 + os.getpid() % 1000, delay), nprocs=2)
