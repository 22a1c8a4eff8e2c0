"""torchvision's DataLoader over an ImageFolder, the reference recipe's
transforms, num_workers processes: the side bench/training/image_bench.sh compares the
worker's loader with. One JSON line: images per second over the epochs.

    /usr/bin/python3 bench/training/torchvision_loader.py --root DIR --workers N
        [--batch 64] [--size 224] [--resize 256] [--eval] [--epochs 1]
"""
import argparse
import json
import time

import torch
import torchvision.transforms as T
from torchvision.datasets import ImageFolder

MEAN = [0.485, 0.456, 0.406]
STD = [0.229, 0.224, 0.225]


def recipe(args):
    """references/classification/presets.py, PIL path."""
    if args.eval:
        first = [T.Resize(args.resize), T.CenterCrop(args.size)]
    else:
        first = [T.RandomResizedCrop(args.size), T.RandomHorizontalFlip()]
    return T.Compose(first + [T.PILToTensor(), T.ConvertImageDtype(torch.float),
                              T.Normalize(MEAN, STD)])


def one_thread(_):
    # Each worker process decodes on one core, as each loader thread does.
    torch.set_num_threads(1)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--root", required=True)
    p.add_argument("--workers", type=int, default=1)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--size", type=int, default=224)
    p.add_argument("--resize", type=int, default=256)
    p.add_argument("--eval", action="store_true")
    p.add_argument("--epochs", type=int, default=1)
    args = p.parse_args()
    torch.set_num_threads(1)
    data = ImageFolder(args.root, transform=recipe(args))
    loader = torch.utils.data.DataLoader(
        data, batch_size=args.batch, shuffle=True, num_workers=args.workers,
        worker_init_fn=one_thread, persistent_workers=False)
    images = 0
    start = time.perf_counter()
    for _ in range(args.epochs):
        for x, _y in loader:
            images += x.shape[0]
    secs = time.perf_counter() - start
    print(json.dumps({"impl": "torchvision", "threads": args.workers, "images": images,
                      "seconds": round(secs, 3), "images_per_sec": round(images / secs, 1)}))


if __name__ == "__main__":
    main()
