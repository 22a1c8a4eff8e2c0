"""The GPT example (examples/gpt/) written with ringleader.fit.

    /usr/bin/python3 examples/python/gpt_fit.py

The same byte-level GPT (examples/gpt/model.py: 4 layers, 4 heads, 128 wide, block 64,
seed 42), the same corpus (Debian's fortunes, first 90% to train, last 10% to test)
and the same recipe as examples/gpt/gpt_fortunes.textproto: Adam 1e-3, 1 epoch, 16
per rank on 2 workers. The model's forward(idx, targets) computes its own loss, which
fit sees from the argument's name (loss="model"); block_size comes from the model.
The textproto reaches a test loss 41% below the unigram entropy of the bytes (target:
30%; bench/README.md, "The example workloads, full runs").

The trained model comes back as the GPT class itself (result.model), so it samples
text right away. --limit-bytes makes a quick run.
"""
import argparse
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "gpt"))
# This checkout's package (scripts/setup.sh also makes it importable anywhere).
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))

import numpy as np  # noqa: E402

import ringleader  # noqa: E402
from generate import generate  # noqa: E402  (examples/gpt/generate.py)
from model import GPTConfig, build  # noqa: E402
from prepare import read_corpus, unigram_bits_per_byte  # noqa: E402


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--fortunes-dir", default="/usr/share/games/fortunes")
    p.add_argument("--limit-bytes", type=int, default=0, help="first N bytes of the corpus (0: all)")
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--workers", type=int, default=2)
    args = p.parse_args(argv)

    corpus = read_corpus(args.fortunes_dir)
    if args.limit_bytes:
        corpus = corpus[:args.limit_bytes]
    tokens = np.frombuffer(corpus, dtype=np.uint8)  # one token per byte
    split = int(len(tokens) * 0.9)
    model = build(GPTConfig(), seed=42)
    result = ringleader.fit(model, tokens[:split], test=tokens[split:],
                            task="language_model", optimizer="adam", lr=1e-3,
                            epochs=args.epochs, batch_size=16,
                            workers=args.workers, seed=42)
    unigram = unigram_bits_per_byte(tokens[:split])
    loss = result.final_metrics["test_loss"]
    bits = loss / math.log(2)
    print(f"test loss {loss:.4f} nats = {bits:.3f} bits per byte; unigram entropy "
          f"{unigram:.3f} bits: {100 * (1 - bits / unigram):.1f}% below (target 30%)")
    text = generate(result.model, b"Q: What ", 200, result.model.block_size,
                    temperature=0.8, top_k=40, seed=1)
    print(text.decode("utf-8", errors="replace"))


if __name__ == "__main__":
    main()
