"""torch.distributed all_reduce (Gloo, or NCCL with --backend nccl: rank r on
cuda:r), timed like ringleader-allreduce-peer.

Run by bench/allreduce/allreduce_bench.sh with Debian's python3-torch (/usr/bin/python3):
    /usr/bin/python3 bench/allreduce/torch_allreduce.py --world 2 --sizes 1024,...
Rank 0 prints one JSON object per size (algbw = bytes / median time,
busbw = algbw * 2 (n - 1) / n, as nccl-tests defines them).
"""
import argparse
import json
import os
import socket
import sys
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run(rank, args, port):
    torch.set_num_threads(1)
    dist.init_process_group(args.backend, init_method=f"tcp://127.0.0.1:{port}",
                            rank=rank, world_size=args.world)
    device = torch.device("cuda", rank) if args.backend == "nccl" else torch.device("cpu")
    if args.backend == "nccl":
        torch.cuda.set_device(device)

    def all_reduce(t):
        dist.all_reduce(t)
        if args.backend == "nccl":
            torch.cuda.synchronize(device)  # Done when the sum is there.
    world = args.world
    for bytes_ in [int(s) for s in args.sizes.split(",")]:
        buf = torch.ones(bytes_ // 4, dtype=torch.float32, device=device)
        t0 = time.perf_counter()
        for _ in range(2):
            all_reduce(buf)
        warm = (time.perf_counter() - t0) / 2
        iters = torch.tensor([min(max(int(args.seconds_per_size / max(warm, 1e-6)),
                                      args.min_iters), args.max_iters)], device=device)
        dist.broadcast(iters, 0)
        times = []
        for _ in range(int(iters.item())):
            start = time.perf_counter()
            all_reduce(buf)
            times.append(time.perf_counter() - start)
        times.sort()
        median = times[len(times) // 2]
        algbw = bytes_ / median / 1e9
        if rank == 0:
            print(json.dumps({"impl": "torch-" + args.backend, "world": world,
                              "bytes": bytes_, "iters": int(iters.item()),
                              "median_s": median, "algbw_gbps": algbw,
                              "busbw_gbps": algbw * 2 * (world - 1) / world}),
                  flush=True)
    dist.destroy_process_group()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--world", type=int, required=True)
    p.add_argument("--sizes", required=True)
    p.add_argument("--backend", choices=["gloo", "nccl"], default="gloo")
    p.add_argument("--seconds_per_size", type=float, default=1.0)
    p.add_argument("--min_iters", type=int, default=5)
    p.add_argument("--max_iters", type=int, default=200)
    args = p.parse_args()
    mp.start_processes(run, args=(args, free_port()), nprocs=args.world,
                       start_method="spawn")


if __name__ == "__main__":
    sys.exit(main())
