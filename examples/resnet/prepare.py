"""Prepare the ResNet-on-Fashion-MNIST workload: the .npy data set and the TorchScript model.

    /usr/bin/python3 examples/resnet/prepare.py --out /tmp/ringleader-resnet

reads the IDX gzip files of Debian's dataset-fashion-mnist (--data-dir), pads each 28x28
image with 2 zero pixels per side to 32x32 and repeats its channel three times, and writes
to --out:

    train_x.npy uint8 [60000, 3, 32, 32]   train_y.npy int64 [60000]
    test_x.npy  uint8 [10000, 3, 32, 32]   test_y.npy  int64 [10000]
    normalization.json   per-channel mean/std of the padded train images / 255
    model.pt             the ResNet of model.py, torch.jit.script-ed, seeded with --seed

The mean/std printed (and in normalization.json) go in the job file's InputTransform
with scale 1/255 (resnet_fashion_mnist.textproto). --limit-train/--limit-test keep only
the first N/M samples, for fast tests.
"""
import argparse
import gzip
import json
import os
import struct
import sys

import numpy as np
import torch

from model import build, int_list

IDX_IMAGES_MAGIC = 2051  # IDX: 0x00 0x00 ubyte-type 3-dims
IDX_LABELS_MAGIC = 2049
PAD = 2                  # 28 + 2 * 2 = 32: the CIFAR-sized input the ResNet expects


def read_idx(path: str, magic: int) -> np.ndarray:
    """An IDX file (gzip or plain) as a uint8 array of the shape its header gives."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        data = f.read()
    got, = struct.unpack(">i", data[:4])
    if got != magic:
        raise ValueError(f"{path}: magic {got}, expected {magic}")
    ndim = magic & 0xFF
    shape = struct.unpack(f">{ndim}i", data[4:4 + 4 * ndim])
    body = np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim)
    if body.size != int(np.prod(shape)):
        raise ValueError(f"{path}: {body.size} bytes of data for shape {shape}")
    return body.reshape(shape)


def find(data_dir: str, stem: str) -> str:
    for name in (stem + ".gz", stem):
        path = os.path.join(data_dir, name)
        if os.path.exists(path):
            return path
    raise FileNotFoundError(f"no {stem}[.gz] in {data_dir}")


def load_split(data_dir: str, prefix: str, limit: int):
    """(images uint8 [N, 3, 32, 32], labels int64 [N]) of split 'train' or 't10k'."""
    images = read_idx(find(data_dir, f"{prefix}-images-idx3-ubyte"), IDX_IMAGES_MAGIC)
    labels = read_idx(find(data_dir, f"{prefix}-labels-idx1-ubyte"), IDX_LABELS_MAGIC)
    if len(images) != len(labels):
        raise ValueError(f"{prefix}: {len(images)} images but {len(labels)} labels")
    if limit > 0:
        images, labels = images[:limit], labels[:limit]
    padded = np.pad(images, ((0, 0), (PAD, PAD), (PAD, PAD)))  # zeros, like the background
    rgb = np.repeat(padded[:, None], 3, axis=1)
    return np.ascontiguousarray(rgb), labels.astype(np.int64)


def channel_stats(images: np.ndarray):
    """Per-channel mean and (population) std of images / 255, as torchvision's Normalize wants."""
    x = images.astype(np.float64) / 255.0
    return x.mean(axis=(0, 2, 3)).tolist(), x.std(axis=(0, 2, 3)).tolist()


def write_data(args) -> None:
    os.makedirs(args.out, exist_ok=True)
    train_x, train_y = load_split(args.data_dir, "train", args.limit_train)
    test_x, test_y = load_split(args.data_dir, "t10k", args.limit_test)
    for name, array in (("train_x", train_x), ("train_y", train_y),
                        ("test_x", test_x), ("test_y", test_y)):
        np.save(os.path.join(args.out, name + ".npy"), array)
        print(f"{name}.npy: {array.dtype} {list(array.shape)}")
    mean, std = channel_stats(train_x)
    with open(os.path.join(args.out, "normalization.json"), "w") as f:
        json.dump({"scale": 1.0 / 255.0, "mean": mean, "std": std}, f, indent=2)
    print("normalization (of padded train images / 255):")
    print("  mean:", ", ".join(f"{m:.6f}" for m in mean))
    print("  std: ", ", ".join(f"{s:.6f}" for s in std))


def write_model(args) -> None:
    model = build(args.widths, args.blocks, args.seed)
    scripted = torch.jit.script(model)
    path = os.path.join(args.out, "model.pt")
    scripted.save(path)
    params = sum(p.numel() for p in model.parameters())
    print(f"model.pt: ResNet widths {args.widths} blocks {args.blocks}, {params} parameters, "
          f"seed {args.seed}")


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data-dir", default="/usr/share/datasets/fashion-mnist",
                   help="directory with the Fashion-MNIST IDX files (gzip or plain)")
    p.add_argument("--out", default="/tmp/ringleader-resnet", help="output directory")
    p.add_argument("--limit-train", type=int, default=0, help="keep the first N train samples (0: all)")
    p.add_argument("--limit-test", type=int, default=0, help="keep the first M test samples (0: all)")
    p.add_argument("--widths", type=int_list, default=[16, 32, 64], help="channels per stage")
    p.add_argument("--blocks", type=int_list, default=[1, 1, 1], help="BasicBlocks per stage")
    p.add_argument("--seed", type=int, default=42, help="torch.manual_seed for the initial weights")
    p.add_argument("--skip-data", action="store_true", help="only write model.pt")
    p.add_argument("--skip-model", action="store_true", help="only write the .npy files")
    return p.parse_args(argv)


def main(argv=None) -> None:
    args = parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    if not args.skip_data:
        write_data(args)
    if not args.skip_model:
        write_model(args)


if __name__ == "__main__":
    main(sys.argv[1:])
