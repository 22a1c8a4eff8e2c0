"""PyTorch's own ProcessGroupGloo with 1 and with 2 worker threads (its
default), side by side: 2 processes on 127.0.0.1 time blocking float32
all-reduces one after the other (each waited before the next is issued), as
bench/allreduce/inflight_bench.sh's K=1 and K=2 lanes do. The reference for
ddp.buckets_in_flight's default (bench/README.md, "Buckets in flight").
Prints one JSON line per (threads, size, round); rounds alternate 1 and 2
threads so a drifting machine load favours neither.
    /usr/bin/python3 bench/allreduce/torch_gloo_threads.py [--sizes 4096,65536] [--rounds 3] [--iters 300]
"""
import argparse
import json
import multiprocessing as mp
import socket
import time
from datetime import timedelta

import torch
import torch.distributed as dist


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rank_main(rank, port, threads, sizes, iters, rnd, out):
    torch.set_num_threads(1)
    store = dist.TCPStore("127.0.0.1", port, 2, rank == 0, timedelta(seconds=60))
    opts = dist.ProcessGroupGloo._Options()
    opts._devices = [dist.ProcessGroupGloo.create_device(hostname="127.0.0.1")]
    opts._threads = threads
    opts._timeout = timedelta(seconds=60)
    pg = dist.ProcessGroupGloo(store, rank, 2, opts)
    for size in sizes:
        t = torch.ones(size // 4)
        for _ in range(20):
            pg.allreduce([t]).wait()
        times = []
        for _ in range(iters):
            start = time.perf_counter()
            pg.allreduce([t]).wait()
            times.append(time.perf_counter() - start)
        times.sort()
        if rank == 0:
            out.put({"impl": "torch-gloo", "threads": threads, "bytes": size,
                     "round": rnd, "iters": iters,
                     "median_s": times[len(times) // 2], "min_s": times[0]})


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--sizes", default="4096,65536")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--iters", type=int, default=300)
    a = p.parse_args()
    sizes = [int(s) for s in a.sizes.split(",")]
    out = mp.Queue()
    for rnd in range(1, a.rounds + 1):
        for threads in (1, 2) if rnd % 2 else (2, 1):
            port = free_port()
            procs = [mp.Process(target=rank_main,
                                args=(r, port, threads, sizes, a.iters, rnd, out))
                     for r in range(2)]
            for proc in procs:
                proc.start()
            for proc in procs:
                proc.join(timeout=600)
            while not out.empty():
                print(json.dumps(out.get()), flush=True)


if __name__ == "__main__":
    main()
