"""Writes images with PIL and what PIL and torchvision make of them, for
image_pil_test: decoded pixels (PIL's convert("RGB"), and Image.draft's
reduced JPEG scales), crop boxes of RandomResizedCrop.get_params, and the
reference recipe's tensors (RandomResizedCrop + RandomHorizontalFlip, and
Resize + CenterCrop, then PILToTensor, ConvertImageDtype, Normalize).

torch's random draws are replaced by the worker's per-sample stream
(SplitMix64 from a seed, worker/data/sample_random.h), so both sides crop the
same box from the same numbers. Usage: image_reference.py DIR
"""
import math
import os
import sys

import numpy as np
import torch
import torchvision.transforms as T
from PIL import Image

M64 = (1 << 64) - 1
MEAN = [0.485, 0.456, 0.406]
STD = [0.229, 0.224, 0.225]
SIZE = 32
RESIZE = 36


class Stream:
    """worker/data/sample_random.h's SampleRandom."""

    def __init__(self, seed):
        self.state = seed

    def next(self):
        self.state = (self.state + 0x9E3779B97F4A7C15) & M64
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
        return z ^ (z >> 31)

    def uniform(self):
        return (self.next() >> 11) * (1.0 / 9007199254740992.0)


class FakeDraws:
    """Stands in for torch.empty(1).uniform_, torch.randint and torch.rand
    while a transform runs: each draw takes the stream's next uniform."""

    def __init__(self, seed):
        self.stream = Stream(seed)
        self.flip = (seed >> 63) != 0
        self.real = (torch.empty, torch.randint, torch.rand)

    def __enter__(self):
        fake = self

        class Empty:
            def uniform_(self, a, b):
                a, b = float(a), float(b)
                u = fake.stream.uniform()
                return torch.tensor([a + u * (b - a)], dtype=torch.float32)

        torch.empty = lambda *a, **k: Empty()

        def randint(lo, hi, size=None, **k):
            n = hi - lo
            return torch.tensor([lo + min(n - 1, int(fake.stream.uniform() * n))])

        torch.randint = randint
        # RandomHorizontalFlip flips when torch.rand(1) < p (0.5).
        torch.rand = lambda *a, **k: torch.tensor([0.0 if fake.flip else 1.0])
        return self

    def __exit__(self, *exc):
        torch.empty, torch.randint, torch.rand = self.real


def picture(w, h, seed):
    rs = np.random.RandomState(seed)
    x = np.linspace(0, 1, w)[None, :, None]
    y = np.linspace(0, 1, h)[:, None, None]
    base = (np.sin(7 * x + 4 * y * y + np.arange(3)) * 0.5 + 0.5) * 200
    noise = rs.randint(0, 50, (h, w, 3))
    return Image.fromarray((base + noise).clip(0, 255).astype(np.uint8))


def write_images(d):
    """Every kind of file the worker decodes."""
    picture(97, 61, 1).save(f"{d}/baseline.jpg", quality=90)
    picture(150, 121, 2).save(f"{d}/progressive.jpg", quality=85, progressive=True)
    picture(64, 48, 3).save(f"{d}/444.jpg", quality=95, subsampling=0)
    picture(80, 100, 4).convert("L").save(f"{d}/gray.jpg")
    picture(70, 50, 5).convert("CMYK").save(f"{d}/cmyk.jpg")
    picture(640, 480, 6).save(f"{d}/big.jpg", quality=90)
    picture(45, 33, 7).save(f"{d}/rgb.png")
    rgba = picture(50, 40, 8).convert("RGBA")
    rgba.putalpha(Image.fromarray(np.tile(np.arange(50, dtype=np.uint8) * 5, (40, 1))))
    rgba.save(f"{d}/rgba.png")
    pal = picture(41, 37, 9).convert("P", palette=Image.ADAPTIVE, colors=64)
    pal.save(f"{d}/palette.png", transparency=3)
    picture(30, 60, 10).convert("L").save(f"{d}/gray.png")
    picture(33, 20, 11).convert("LA").save(f"{d}/gray_alpha.png")
    picture(40, 30, 12).convert("1").save(f"{d}/bilevel.png")
    picture(52, 31, 13).save(f"{d}/interlaced.png", optimize=False)


def write_decodes(d, names):
    with open(f"{d}/decode.txt", "w") as out:
        for name in names:
            im = Image.open(f"{d}/{name}")
            rgb = im.convert("RGB")
            rgb.tobytes()
            open(f"{d}/{name}.rgb", "wb").write(rgb.tobytes())
            out.write(f"{name} 1 {rgb.size[0]} {rgb.size[1]}\n")
        for denom in (2, 4, 8):
            im = Image.open(f"{d}/big.jpg")
            w, h = im.size
            im.draft("RGB", ((w + denom - 1) // denom, (h + denom - 1) // denom))
            rgb = im.convert("RGB")
            open(f"{d}/big.jpg.{denom}.rgb", "wb").write(rgb.tobytes())
            out.write(f"big.jpg {denom} {rgb.size[0]} {rgb.size[1]}\n")


def recipe(train):
    first = (
        [T.RandomResizedCrop(SIZE), T.RandomHorizontalFlip()]
        if train
        else [T.Resize(RESIZE), T.CenterCrop(SIZE)]
    )
    return T.Compose(first + [T.PILToTensor(), T.ConvertImageDtype(torch.float), T.Normalize(MEAN, STD)])


SEEDS = [1, 2, 3, 0x8000000000000001, 0xDEADBEEFCAFEF00D, 12345678901234567]


def write_transforms(d, names):
    with open(f"{d}/transform.txt", "w") as out:
        for name in names:
            img = Image.open(f"{d}/{name}").convert("RGB")
            for train in (True, False):
                for i, seed in enumerate(SEEDS if train else SEEDS[:1]):
                    with FakeDraws(seed):
                        t = recipe(train)(img)
                    kind = "train" if train else "eval"
                    path = f"{d}/{name}.{kind}{i}.f32"
                    t.numpy().astype("<f4").tofile(path)
                    out.write(f"{name} {kind} {seed} {path}\n")


def write_boxes(d):
    rs = np.random.RandomState(7)
    sizes = [(1, 1), (3, 500), (500, 3), (224, 224), (2560, 1600), (17, 1000)]
    sizes += [tuple(int(v) for v in rs.randint(1, 3000, 2)) for _ in range(60)]
    ranges = [((0.08, 1.0), (3 / 4, 4 / 3)), ((0.25, 0.5), (0.5, 2.0)), ((1.0, 1.0), (1.0, 1.0))]
    with open(f"{d}/boxes.txt", "w") as out:
        for w, h in sizes:
            for (scale, ratio) in ranges:
                for k in range(5):
                    seed = int(rs.randint(0, 2**62)) * 3 + k
                    img = Image.new("RGB", (w, h))
                    with FakeDraws(seed):
                        i, j, bh, bw = T.RandomResizedCrop.get_params(img, scale, ratio)
                    out.write(f"{w} {h} {scale[0]!r} {scale[1]!r} {ratio[0]!r} {ratio[1]!r} {seed} {i} {j} {bh} {bw}\n")


def main():
    d = sys.argv[1]
    write_images(d)
    names = sorted(n for n in os.listdir(d) if n.endswith((".jpg", ".png")))
    write_decodes(d, names)
    write_transforms(d, [n for n in names if n != "big.jpg"] + ["big.jpg"])
    write_boxes(d)


if __name__ == "__main__":
    main()
