"""Eager single-process PyTorch reference for resnet_fashion_mnist.textproto.

    /usr/bin/python3 examples/resnet/prepare.py --out /tmp/ringleader-resnet
    /usr/bin/python3 examples/resnet/train_reference.py --data /tmp/ringleader-resnet

Trains the same network as model.pt (model.py, same --seed, so the same initial weights)
on the .npy files prepare.py wrote, with what the job file asks of the workers: inputs
* 1/255 then per-channel (x - mean) / std, constant-LR SGD with momentum (or Adam), a
fresh shuffle every epoch, no augmentation. The job's global batch is batch_size x 2
ranks, so --batch-size here is that global batch (gradients averaged over it either way).
Prints test accuracy after every epoch; --max-minutes stops it after the epoch that
crosses the budget. --bench N times N forward+backward+step iterations instead.
"""
import argparse
import json
import os
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

from model import build, int_list


def load(data_dir: str, split: str):
    x = torch.from_numpy(np.load(os.path.join(data_dir, f"{split}_x.npy")))
    y = torch.from_numpy(np.load(os.path.join(data_dir, f"{split}_y.npy")))
    return x, y


def normalizer(data_dir: str):
    """x uint8 [B, 3, H, W] -> float, exactly as the job's InputTransform (scale, mean, std)."""
    with open(os.path.join(data_dir, "normalization.json")) as f:
        norm = json.load(f)
    mean = torch.tensor(norm["mean"], dtype=torch.float32).view(1, -1, 1, 1)
    std = torch.tensor(norm["std"], dtype=torch.float32).view(1, -1, 1, 1)
    scale = float(norm["scale"])
    return lambda x: (x.float() * scale - mean) / std


def make_optimizer(model, args):
    if args.optimizer == "adam":
        return torch.optim.Adam(model.parameters(), lr=args.lr, weight_decay=args.weight_decay)
    return torch.optim.SGD(model.parameters(), lr=args.lr, momentum=args.momentum,
                           weight_decay=args.weight_decay)


def train_epoch(model, opt, x, y, norm, batch_size, generator):
    model.train()
    order = torch.randperm(len(x), generator=generator)
    total, count = 0.0, 0
    for start in range(0, len(x), batch_size):
        idx = order[start:start + batch_size]
        loss = F.cross_entropy(model(norm(x[idx])), y[idx])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        total += loss.item() * len(idx)
        count += len(idx)
    return total / count


@torch.no_grad()
def evaluate(model, x, y, norm, batch_size=1000):
    model.eval()
    correct, loss = 0, 0.0
    for start in range(0, len(x), batch_size):
        logits = model(norm(x[start:start + batch_size]))
        target = y[start:start + batch_size]
        loss += F.cross_entropy(logits, target, reduction="sum").item()
        correct += (logits.argmax(1) == target).sum().item()
    return correct / len(x), loss / len(x)


def bench(model, opt, x, y, norm, batch_size, steps):
    """Samples/s of forward + backward + step on real batches, after 5 warm-up steps."""
    model.train()
    def step(i):
        idx = torch.arange(i * batch_size, (i + 1) * batch_size) % len(x)
        opt.zero_grad(set_to_none=True)
        F.cross_entropy(model(norm(x[idx])), y[idx]).backward()
        opt.step()
    for i in range(5):
        step(i)
    start = time.perf_counter()
    for i in range(steps):
        step(i)
    seconds = time.perf_counter() - start
    print(f"bench: batch {batch_size}, {steps} steps, {seconds / steps * 1000:.1f} ms/step, "
          f"{batch_size * steps / seconds:.0f} samples/s, "
          f"epoch of {len(x)} ~ {len(x) / (batch_size * steps / seconds):.0f} s")


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", default="/tmp/ringleader-resnet", help="prepare.py's output directory")
    p.add_argument("--widths", type=int_list, default=[16, 32, 64], help="as given to prepare.py")
    p.add_argument("--blocks", type=int_list, default=[1, 1, 1], help="as given to prepare.py")
    p.add_argument("--seed", type=int, default=42, help="initial weights and shuffling")
    p.add_argument("--epochs", type=int, default=8)
    p.add_argument("--batch-size", type=int, default=128, help="global batch (job: per-rank x 2)")
    p.add_argument("--optimizer", choices=["sgd", "adam"], default="sgd")
    p.add_argument("--lr", type=float, default=0.05)
    p.add_argument("--momentum", type=float, default=0.9)
    p.add_argument("--weight-decay", type=float, default=5e-4)
    p.add_argument("--threads", type=int, default=2, help="torch.set_num_threads")
    p.add_argument("--max-minutes", type=float, default=30.0, help="stop after the epoch past this")
    p.add_argument("--bench", type=int, default=0, metavar="N", help="time N steps and exit")
    p.add_argument("--save", default="", metavar="PATH", help="save the trained model as TorchScript")
    return p.parse_args(argv)


def main(argv=None) -> None:
    args = parse_args(argv)
    torch.set_num_threads(args.threads)
    model = build(args.widths, args.blocks, args.seed)
    opt = make_optimizer(model, args)
    norm = normalizer(args.data)
    train_x, train_y = load(args.data, "train")
    if args.bench:
        bench(model, opt, train_x, train_y, norm, args.batch_size, args.bench)
        return
    test_x, test_y = load(args.data, "test")
    # Like DistributedSampler: the permutation of epoch e comes from seed + e.
    generator = torch.Generator()
    begin = time.perf_counter()
    for epoch in range(1, args.epochs + 1):
        generator.manual_seed(args.seed + epoch - 1)
        epoch_start = time.perf_counter()
        train_loss = train_epoch(model, opt, train_x, train_y, norm, args.batch_size, generator)
        acc, test_loss = evaluate(model, test_x, test_y, norm)
        now = time.perf_counter()
        print(f"epoch {epoch}: train_loss {train_loss:.4f} test_loss {test_loss:.4f} "
              f"test_acc {acc:.4f} epoch_s {now - epoch_start:.0f} total_s {now - begin:.0f}",
              flush=True)
        if now - begin > args.max_minutes * 60:
            print(f"stopping: past the {args.max_minutes} min budget")
            break
    if args.save:
        torch.jit.script(model).save(args.save)
        print(f"saved {args.save}")


if __name__ == "__main__":
    main(sys.argv[1:])
