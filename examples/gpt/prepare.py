"""Prepare the GPT-on-fortunes workload: byte-level token files and the TorchScript model.

    /usr/bin/python3 examples/gpt/prepare.py --out /tmp/ringleader-gpt

reads every plain-text fortune file under --fortunes-dir (Debian's `fortunes` package;
the .dat index files and the .u8 symlinks are skipped), concatenates them in name order
as UTF-8 bytes (the '%' separators stay), and writes to --out:

    train.bin  the first 90% of the bytes  } raw little-endian uint16, one token per byte
    test.bin   the last 10%                } (nanoGPT's format), vocabulary 256
    meta.json  vocab_size, sizes, and the unigram entropy of the train bytes in bits/byte
    gpt.pt     the GPT of model.py, torch.jit.script-ed, seeded with --seed
               (forward(idx, targets=None) -> (logits, loss); --logits-only: forward(idx) -> logits)

The unigram entropy is what a model that ignores context scores; the workload's target
is a test loss at least 30% below it.
"""
import argparse
import json
import math
import os
import sys

import numpy as np
import torch

from model import add_config_flags, build, config_from_args

VOCAB_SIZE = 256  # one token per byte


def fortune_files(root: str):
    """Plain-text fortune files under root, sorted: no .dat/.u8, no symlinks (they duplicate)."""
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(filenames):
            path = os.path.join(dirpath, name)
            if os.path.islink(path) or name.endswith((".dat", ".u8")):
                continue
            found.append(path)
    return found


def read_corpus(root: str) -> bytes:
    files = fortune_files(root)
    if not files:
        raise FileNotFoundError(f"no fortune files under {root} (apt-get install fortunes)")
    chunks = []
    for path in files:
        with open(path, "rb") as f:
            chunks.append(f.read())
    print(f"{len(files)} fortune files from {root}")
    return b"".join(chunks)


def unigram_bits_per_byte(tokens: np.ndarray) -> float:
    counts = np.bincount(tokens, minlength=VOCAB_SIZE).astype(np.float64)
    p = counts[counts > 0] / counts.sum()
    return float(-(p * np.log2(p)).sum())


def write_tokens(path: str, data: bytes) -> np.ndarray:
    tokens = np.frombuffer(data, dtype=np.uint8).astype("<u2")  # little-endian uint16
    tokens.tofile(path)
    return tokens


def write_data(args) -> None:
    corpus = read_corpus(args.fortunes_dir)
    split = int(len(corpus) * args.train_fraction)
    train = write_tokens(os.path.join(args.out, "train.bin"), corpus[:split])
    test = write_tokens(os.path.join(args.out, "test.bin"), corpus[split:])
    bits = unigram_bits_per_byte(train)
    meta = {
        "vocab_size": VOCAB_SIZE,
        "token_dtype": "uint16",
        "corpus_bytes": len(corpus),
        "train_tokens": int(train.size),
        "test_tokens": int(test.size),
        "unigram_bits_per_byte": bits,
        "unigram_nats_per_byte": bits * math.log(2),
        "target_test_loss_nats": 0.7 * bits * math.log(2),  # 30% below the unigram entropy
    }
    with open(os.path.join(args.out, "meta.json"), "w") as f:
        json.dump(meta, f, indent=2)
    print(f"corpus {len(corpus)} bytes: train.bin {train.size} tokens, test.bin {test.size} tokens")
    print(f"unigram entropy of the train bytes: {bits:.4f} bits/byte "
          f"({meta['unigram_nats_per_byte']:.4f} nats); target test loss <= "
          f"{meta['target_test_loss_nats']:.4f} nats ({0.7 * bits:.4f} bits/byte)")


def write_model(args) -> None:
    cfg = config_from_args(args)
    model = build(cfg, args.seed, logits_only=args.logits_only)
    path = os.path.join(args.out, args.model_name)
    torch.jit.script(model).save(path)
    params = sum(p.numel() for p in model.parameters())
    kind = "forward(idx) -> logits" if args.logits_only else "forward(idx, targets) -> (logits, loss)"
    print(f"{args.model_name}: {cfg}, {params} parameters, seed {args.seed}, {kind}")


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--fortunes-dir", default="/usr/share/games/fortunes")
    p.add_argument("--out", default="/tmp/ringleader-gpt", help="output directory")
    p.add_argument("--train-fraction", type=float, default=0.9)
    p.add_argument("--seed", type=int, default=42, help="torch.manual_seed for the initial weights")
    p.add_argument("--logits-only", action="store_true",
                   help="export forward(idx) -> logits instead of (logits, loss)")
    p.add_argument("--model-name", default="gpt.pt", help="file name of the export in --out")
    p.add_argument("--skip-data", action="store_true", help="only write the model")
    p.add_argument("--skip-model", action="store_true", help="only write the token files")
    add_config_flags(p)
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
