"""Write Fashion-MNIST as image files, the way users have image data: a torchvision
ImageFolder (ROOT/CLASS/IMAGE) and, optionally, WebDataset tar shards.

    /usr/bin/python3 examples/resnet/prepare_images.py --out /tmp/ringleader-resnet-images

reads Debian's dataset-fashion-mnist and writes to --out:

    train/<class>/<index>.jpg, test/<class>/<index>.jpg   the ImageFolder (classes named
        "0-T-shirt_top" ... "9-Ankle_boot", so torchvision's sorted numbering keeps
        Fashion-MNIST's label ids)
    shards/train-{000000..N-1}.tar, shards/test-000000.tar   with --shards N: the same
        images as WebDataset samples ({key}.jpg + {key}.cls)
    model.pt   the ResNet of model.py, as prepare.py writes it

By default each image is the ResNet example's own input (28x28 padded to 32x32, RGB),
so a job on these files trains on exactly what resnet_fashion_mnist.textproto trains on
from .npy (examples/resnet_image_folder.textproto). --sizes MIN,MAX instead rescales each image
to a random size in [MIN, MAX] per side (bilinear), for the loader benchmark;
--format png or mixed (every third image PNG, every fifth JPEG grayscale) varies the
files.
"""
import argparse
import io
import os
import sys
import tarfile

import numpy as np
from PIL import Image

from prepare import load_split, write_model
from model import int_list

CLASSES = ["T-shirt_top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt",
           "Sneaker", "Bag", "Ankle_boot"]


def class_folder(label: int) -> str:
    return f"{label}-{CLASSES[label]}"


def encode(image: np.ndarray, index: int, args, rng) -> (bytes, str):
    """One [3, 32, 32] uint8 image as the bytes of a file and its extension."""
    img = Image.fromarray(np.ascontiguousarray(image.transpose(1, 2, 0)))
    if args.sizes:
        lo, hi = args.sizes
        img = img.resize((int(rng.integers(lo, hi + 1)), int(rng.integers(lo, hi + 1))),
                         Image.BILINEAR)
    png = args.format == "png" or (args.format == "mixed" and index % 3 == 0)
    if args.format == "mixed" and index % 5 == 0:
        img = img.convert("L")
    out = io.BytesIO()
    if png:
        img.save(out, format="PNG")
        return out.getvalue(), "png"
    img.save(out, format="JPEG", quality=args.quality)
    return out.getvalue(), "jpg"


def write_split(args, split: str, images, labels, rng):
    """The ImageFolder files of a split; returns [(key, bytes, ext, label)]."""
    samples = []
    for label in range(len(CLASSES)):
        os.makedirs(os.path.join(args.out, split, class_folder(label)), exist_ok=True)
    for i, (image, label) in enumerate(zip(images, labels)):
        data, ext = encode(image, i, args, rng)
        key = f"{i:06d}"
        with open(os.path.join(args.out, split, class_folder(int(label)), f"{key}.{ext}"),
                  "wb") as f:
            f.write(data)
        samples.append((key, data, ext, int(label)))
    print(f"{split}: {len(samples)} images under {os.path.join(args.out, split)}")
    return samples


def add_member(tar: tarfile.TarFile, name: str, data: bytes):
    info = tarfile.TarInfo(name)
    info.size = len(data)
    tar.addfile(info, io.BytesIO(data))


def write_shards(args, split: str, samples, count: int):
    os.makedirs(os.path.join(args.out, "shards"), exist_ok=True)
    per = (len(samples) + count - 1) // count
    for s in range(count):
        path = os.path.join(args.out, "shards", f"{split}-{s:06d}.tar")
        with tarfile.open(path, "w", format=tarfile.USTAR_FORMAT) as tar:
            for key, data, ext, label in samples[s * per:(s + 1) * per]:
                add_member(tar, f"{key}.{ext}", data)
                add_member(tar, f"{key}.cls", str(label).encode())
    last = f"{count - 1:06d}"
    print(f"{split}: {count} shards, {os.path.join(args.out, 'shards', split)}-"
          f"{{000000..{last}}}.tar")


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data-dir", default="/usr/share/datasets/fashion-mnist")
    p.add_argument("--out", default="/tmp/ringleader-resnet-images")
    p.add_argument("--limit-train", type=int, default=0, help="first N train samples (0: all)")
    p.add_argument("--limit-test", type=int, default=0, help="first M test samples (0: all)")
    p.add_argument("--sizes", type=int_list, default=None,
                   help="MIN,MAX: rescale each image to a random size per side")
    p.add_argument("--format", choices=["jpg", "png", "mixed"], default="jpg")
    p.add_argument("--quality", type=int, default=90, help="JPEG quality")
    p.add_argument("--shards", type=int, default=0, help="also write N training tar shards")
    p.add_argument("--widths", type=int_list, default=[16, 32, 64])
    p.add_argument("--blocks", type=int_list, default=[1, 1, 1])
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--skip-model", action="store_true")
    return p.parse_args(argv)


def main(argv=None) -> None:
    args = parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    rng = np.random.default_rng(args.seed)
    for split, prefix, limit in (("train", "train", args.limit_train),
                                 ("test", "t10k", args.limit_test)):
        images, labels = load_split(args.data_dir, prefix, limit)
        samples = write_split(args, split, images, labels, rng)
        if args.shards > 0:
            write_shards(args, split, samples, args.shards if split == "train" else 1)
    if not args.skip_model:
        write_model(args)


if __name__ == "__main__":
    main(sys.argv[1:])
