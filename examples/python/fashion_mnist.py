"""The README's skeleton: a model_fn and a Dataset, trained with PyTorch DDP
(mp.spawn) or with ringleader.fit. The same two objects serve both.

    /usr/bin/python3 examples/python/fashion_mnist.py          # ringleader.fit
    /usr/bin/python3 examples/python/fashion_mnist.py --ddp    # torch DDP, mp.spawn
"""
import argparse
import gzip
import os

import numpy as np
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler

ROOT = "/usr/share/datasets/fashion-mnist"


def model_fn() -> nn.Module:
    return nn.Sequential(nn.Flatten(), nn.Linear(784, 256), nn.ReLU(),
                         nn.Linear(256, 10))


def idx(path: str) -> np.ndarray:
    """An IDX file (MNIST's format) as a uint8 array."""
    raw = gzip.open(path).read()
    shape = np.frombuffer(raw, ">i4", raw[3], 4)
    return np.frombuffer(raw, np.uint8, offset=4 + 4 * raw[3]).reshape(shape)


class FashionMNIST(Dataset):
    """(image float32 [1, 28, 28] in [0, 1], label) per item."""

    def __init__(self, split: str = "train", limit: int = 0):
        prefix = f"{ROOT}/{'train' if split == 'train' else 't10k'}"
        self.x = idx(f"{prefix}-images-idx3-ubyte.gz")[:limit or None]
        self.y = idx(f"{prefix}-labels-idx1-ubyte.gz")[:limit or None]

    def __len__(self) -> int:
        return len(self.y)

    def __getitem__(self, i):
        return torch.from_numpy(self.x[i][None] / np.float32(255)), int(self.y[i])


def train(rank: int, world_size: int, epochs: int = 2) -> None:
    """PyTorch's way: one process per rank, DDP, DistributedSampler."""
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT="29500")
    dist.init_process_group("gloo", rank=rank, world_size=world_size)
    model = DDP(model_fn())
    data = FashionMNIST("train")
    sampler = DistributedSampler(data)
    loader = DataLoader(data, batch_size=64, sampler=sampler)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        for x, y in loader:
            opt.zero_grad()
            nn.functional.cross_entropy(model(x), y).backward()
            opt.step()
    if rank == 0:
        torch.save(model.module.state_dict(), "model.pt")
    dist.destroy_process_group()


def fit(limit: int = 0, **options):
    """Ringleader's way: the same model_fn and Dataset."""
    import ringleader
    return ringleader.fit(model_fn, FashionMNIST("train", limit),
                          test=FashionMNIST("test", limit), optimizer="adam",
                          lr=1e-3, epochs=2, batch_size=64, workers=2, **options)


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--ddp", action="store_true", help="train with torch DDP instead")
    p.add_argument("--limit", type=int, default=0, help="first N images of each split")
    args = p.parse_args()
    if args.ddp:
        mp.spawn(train, args=(2,), nprocs=2)
    else:
        result = fit(args.limit)
        print(result.metrics[-1])
