"""Test-only helper of batchnorm_ddp_parity_test: real PyTorch DDP as the reference.

    make-data OUT --seed S --train N --test M --size HW --widths 4,8 --blocks 1,1
        writes OUT/model.pt (examples/resnet/model.py's ResNet with a RunningCenter before
        its classifier, torch.jit.script-ed, seeded with S), and OUT/{train,test}_{x,y}.npy: uint8 images [N, 3, HW, HW] whose
        brightness and contrast vary from sample to sample (so BatchNorm's batch statistics
        differ from batch to batch and rank to rank), int64 labels in [0, 10).

    ddp CONFIG.json
        trains CONFIG["model"] with torch.nn.parallel.DistributedDataParallel
        (broadcast_buffers=True, Gloo, one process and one thread per rank, a FileStore
        rendezvous: no port to pick), rank r's step k on exactly the samples
        CONFIG["steps"][r][k] with the job's input transform and SGD; then evaluates
        through the DDP wrapper in eval mode (rank r: test samples r, r + W, ...), sums
        pooled with all_reduce. Writes CONFIG["out_model"] (rank 0's module: parameters and
        buffers) and CONFIG["out_json"] ({"loss_sum", "correct", "count"} of the
        evaluation).

Run with Debian's /usr/bin/python3 (python3-torch 1.13, python3-numpy).
"""
import argparse
import datetime
import json
import os
import sys

import numpy as np
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn.functional as F


class RunningCenter(torch.nn.Module):
    """Subtracts a running mean of its inputs, then (in training) moves it 10% toward the
    batch's mean, as running observation normalizers do. Unlike BatchNorm's, its training
    forward reads its buffer, so every rank's step depends on holding rank 0's
    (broadcast_buffers): the buffer sync is visible in rank 0's parameters."""

    def __init__(self, features: int):
        super().__init__()
        self.register_buffer("running_mean", torch.zeros(features))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = x - self.running_mean
        if self.training:
            self.running_mean.mul_(0.9).add_(0.1 * x.detach().mean(dim=0))
        return y


def resnet_with_centered_features(widths, blocks, seed: int) -> torch.nn.Module:
    """examples/resnet's ResNet with RunningCenter between the pooled features and fc (not
    before a BatchNorm, which would cancel a constant shift)."""
    from model import ResNet  # examples/resnet/model.py

    class Net(ResNet):
        def __init__(self):
            super().__init__(widths, blocks)
            self.center = RunningCenter(widths[-1])

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.fc(self.center(self.layers(self.stem(x)).mean(dim=(2, 3))))

    torch.manual_seed(seed)
    return Net()


def make_data(args) -> None:
    sys.path.insert(0, args.examples_resnet)
    from model import int_list  # examples/resnet/model.py

    os.makedirs(args.out, exist_ok=True)
    net = resnet_with_centered_features(int_list(args.widths), int_list(args.blocks), args.seed)
    torch.jit.script(net).save(os.path.join(args.out, "model.pt"))
    rng = np.random.RandomState(args.seed)
    for split, n in (("train", args.train), ("test", args.test)):
        hw = args.size
        noise = rng.uniform(-1.0, 1.0, size=(n, 3, hw, hw))
        brightness = rng.uniform(40.0, 215.0, size=(n, 1, 1, 1))
        contrast = rng.uniform(5.0, 40.0, size=(n, 1, 1, 1))
        x = np.clip(brightness + contrast * noise, 0, 255).astype(np.uint8)
        # Labels with some signal: the brightness decile, one in five flipped.
        y = ((brightness.reshape(n) - 40.0) / 17.5).astype(np.int64).clip(0, 9)
        flip = rng.uniform(size=n) < 0.2
        y[flip] = rng.randint(0, 10, size=int(flip.sum()))
        np.save(os.path.join(args.out, f"{split}_x.npy"), x)
        np.save(os.path.join(args.out, f"{split}_y.npy"), y.astype(np.int64))


def transform(x: np.ndarray, t: dict) -> torch.Tensor:
    """The worker's InputTransform for uint8 inputs: (x * scale - mean[c]) / std[c] in
    double, rounded to float32 once (its per-byte lookup table does the same), handed
    to the model channels-last as the worker hands a convolutional model its images
    on the CPU (worker/train/step/model_probe.h), so that both sides run the same
    convolution kernels, as a CPU training script that sets channels_last does."""
    x = x.astype(np.float64) * (t.get("scale") or 1.0)
    mean = np.asarray(t.get("mean") or [0.0] * x.shape[1]).reshape(1, -1, 1, 1)
    std = np.asarray(t.get("std") or [1.0] * x.shape[1]).reshape(1, -1, 1, 1)
    return torch.from_numpy(((x - mean) / std).astype(np.float32)).contiguous(
        memory_format=torch.channels_last)


def rank_main(rank: int, cfg: dict) -> None:
    torch.set_num_threads(1)
    world = cfg["world"]
    # A bounded wait: a rank whose peer died fails instead of hanging the test.
    dist.init_process_group("gloo", init_method="file://" + cfg["store"], rank=rank,
                            world_size=world, timeout=datetime.timedelta(minutes=2))
    module = torch.jit.load(cfg["model"])
    module.train()
    # DDP takes a ScriptModule in 1.13: its parameters and buffers are the module's, and
    # construction broadcasts rank 0's (the same file on every rank anyway).
    ddp = torch.nn.parallel.DistributedDataParallel(module, broadcast_buffers=True)
    o = cfg["optimizer"]
    opt = torch.optim.SGD(ddp.parameters(), lr=o["lr"], momentum=o["momentum"],
                          weight_decay=o["weight_decay"])
    train_x = np.load(cfg["train_x"], mmap_mode="r")
    train_y = np.load(cfg["train_y"])
    for ids in cfg["steps"][rank]:
        ids = np.asarray(ids, dtype=np.int64)
        x = transform(train_x[ids], cfg["transform"])
        y = torch.from_numpy(train_y[ids])
        opt.zero_grad()
        F.cross_entropy(ddp(x), y).backward()
        opt.step()
    # As a training script evaluates: through the wrapper, whose first forward after
    # training broadcasts rank 0's buffers (require_forward_param_sync is still set).
    ddp.eval()
    test_x = np.load(cfg["test_x"], mmap_mode="r")
    test_y = np.load(cfg["test_y"])
    ids = np.arange(rank, test_y.shape[0], world)
    with torch.no_grad():
        logits = ddp(transform(test_x[ids], cfg["transform"]))
        y = torch.from_numpy(test_y[ids])
        sums = torch.tensor([F.cross_entropy(logits, y, reduction="sum").item(),
                             (logits.argmax(1) == y).sum().item(), float(len(ids))],
                            dtype=torch.float64)
    dist.all_reduce(sums)
    if rank == 0:
        module.save(cfg["out_model"])
        with open(cfg["out_json"], "w") as f:
            json.dump({"loss_sum": sums[0].item(), "correct": int(sums[1].item()),
                       "count": int(sums[2].item())}, f)
    dist.barrier()
    dist.destroy_process_group()


def ddp(args) -> None:
    with open(args.config) as f:
        cfg = json.load(f)
    if os.path.exists(cfg["store"]):
        os.remove(cfg["store"])
    os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")
    mp.spawn(rank_main, args=(cfg,), nprocs=cfg["world"], join=True)


def main(argv) -> None:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    m = sub.add_parser("make-data")
    m.add_argument("out")
    m.add_argument("--examples-resnet", required=True, help="directory of model.py")
    m.add_argument("--seed", type=int, default=7)
    m.add_argument("--train", type=int, default=100)
    m.add_argument("--test", type=int, default=64)
    m.add_argument("--size", type=int, default=16)
    m.add_argument("--widths", default="4,8")
    m.add_argument("--blocks", default="1,1")
    d = sub.add_parser("ddp")
    d.add_argument("config")
    args = p.parse_args(argv)
    make_data(args) if args.command == "make-data" else ddp(args)


if __name__ == "__main__":
    main(sys.argv[1:])
