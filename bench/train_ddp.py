"""PyTorch DDP on Fashion-MNIST, the anchor for bench/train_bench.sh.

The same models as Ringleader's built-ins (worker/model/builtin_models.cc),
the same global batch, SGD with momentum, DistributedSampler, DDP's default
buckets (25 MiB), Gloo on 127.0.0.1, one intra-op thread per rank. Trains
--epochs epochs and evaluates on the test split after each (each rank its
DistributedSampler shard, counts summed with all_reduce), as a training
script's validation loop does. Prints one JSON line: training samples/s over
the first epoch after a warm-up of 20 steps (evaluation excluded), each
epoch's test accuracy, and the seconds from the first step to the first
evaluation at or above 85%.
    /usr/bin/python3 bench/train_ddp.py --model mlp --world 2 --global_batch 128
"""
import argparse
import gzip
import json
import os
import socket
import time

import numpy as np
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
import torch.nn.functional as F

DATA = "/usr/share/datasets/fashion-mnist"


def idx(path):
    with gzip.open(path, "rb") as f:
        raw = f.read()
    ndim = raw[3]
    dims = [int.from_bytes(raw[4 + 4 * i:8 + 4 * i], "big") for i in range(ndim)]
    return np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * ndim).reshape(dims)


class Mlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc0, self.fc1, self.fc2 = nn.Linear(784, 256), nn.Linear(256, 128), nn.Linear(128, 10)

    def forward(self, x):
        x = x.flatten(1)
        return self.fc2(F.relu(self.fc1(F.relu(self.fc0(x)))))


class Cnn(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1, self.conv2 = nn.Conv2d(1, 16, 5), nn.Conv2d(16, 32, 5)
        self.fc1, self.fc2 = nn.Linear(32 * 4 * 4, 128), nn.Linear(128, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2).flatten(1)
        return self.fc2(F.relu(self.fc1(x)))


class NhwcCnn(Cnn):
    """The CNN as Ringleader's worker runs it on CPU (--nhwc): the input in
    channels-last strides, so every activation is channels-last, and ReLU
    after each pooling (the same values and gradients)."""

    def forward(self, x):
        n, c, h, w = x.shape
        if c == 1 and x.is_contiguous():
            x = x.as_strided(x.shape, (h * w, 1, w, 1))
        else:
            x = x.contiguous(memory_format=torch.channels_last)
        x = F.relu(F.max_pool2d(self.conv1(x), 2))
        x = F.relu(F.max_pool2d(self.conv2(x), 2)).flatten(1)
        return self.fc2(F.relu(self.fc1(x)))


def run(rank, args, port):
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}",
                            rank=rank, world_size=args.world)
    images = torch.from_numpy(idx(f"{DATA}/train-images-idx3-ubyte.gz").copy()).float().div_(255)
    images = images.sub_(0.2860).div_(0.3530).unsqueeze(1)
    labels = torch.from_numpy(idx(f"{DATA}/train-labels-idx1-ubyte.gz").astype(np.int64))
    test_images = torch.from_numpy(idx(f"{DATA}/t10k-images-idx3-ubyte.gz").copy()).float().div_(255)
    test_images = test_images.sub_(0.2860).div_(0.3530).unsqueeze(1)
    test_labels = torch.from_numpy(idx(f"{DATA}/t10k-labels-idx1-ubyte.gz").astype(np.int64))
    torch.manual_seed(1)
    net = Mlp() if args.model == "mlp" else NhwcCnn() if args.nhwc else Cnn()
    model = nn.parallel.DistributedDataParallel(net)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    sampler = torch.utils.data.distributed.DistributedSampler(
        torch.utils.data.TensorDataset(images, labels), num_replicas=args.world,
        rank=rank, shuffle=True, seed=1)
    per_rank = args.global_batch // args.world
    test_ids = torch.tensor(list(iter(torch.utils.data.distributed.DistributedSampler(
        torch.utils.data.TensorDataset(test_images, test_labels), num_replicas=args.world,
        rank=rank, shuffle=False))))

    def evaluate():
        model.eval()
        with torch.no_grad():
            correct = torch.zeros(2, dtype=torch.int64)
            for i in range(0, len(test_ids), 1024):
                ids = test_ids[i:i + 1024]
                correct[0] += (model(test_images[ids]).argmax(1) == test_labels[ids]).sum()
                correct[1] += len(ids)
            dist.all_reduce(correct)
        model.train()
        return correct[0].item() / correct[1].item()

    dist.barrier()
    t_start = time.perf_counter()
    rate, accs, to_85 = 0.0, [], None
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        order = torch.tensor(list(iter(sampler)))
        steps = len(order) // per_rank
        if args.max_steps:
            steps = min(steps, args.max_steps)
        warm = min(20, steps // 4)
        start = None
        for s in range(steps):
            if epoch == 0 and s == warm:
                dist.barrier()
                start = time.perf_counter()
            ids = order[s * per_rank:(s + 1) * per_rank]
            loss = F.cross_entropy(model(images[ids]), labels[ids])
            opt.zero_grad()
            loss.backward()
            opt.step()
        if epoch == 0:
            dist.barrier()
            rate = (steps - warm) * args.global_batch / (time.perf_counter() - start)
        accs.append(evaluate())
        if to_85 is None and accs[-1] >= 0.85:
            to_85 = time.perf_counter() - t_start
    if rank == 0:
        print(json.dumps({"impl": args.impl, "model": args.model,
                          "world": args.world, "global_batch": args.global_batch,
                          "samples_per_s": rate, "test_accuracy": accs,
                          "seconds_to_85": to_85}), flush=True)
    dist.destroy_process_group()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--model", choices=["mlp", "cnn"], required=True)
    p.add_argument("--world", type=int, required=True)
    p.add_argument("--global_batch", type=int, required=True)
    p.add_argument("--max_steps", type=int, default=0)
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--impl", default="pytorch-ddp", help="name in the output")
    p.add_argument("--nhwc", action="store_true",
                   help="CNN: channels-last activations and ReLU after pooling, "
                        "as Ringleader's worker runs it on CPU")
    args = p.parse_args()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    mp.start_processes(run, args=(args, port), nprocs=args.world, start_method="spawn")


if __name__ == "__main__":
    main()
