"""Eager single-process PyTorch reference for gpt_fortunes.textproto.

    /usr/bin/python3 examples/gpt/prepare.py --out /tmp/ringleader-gpt
    /usr/bin/python3 examples/gpt/train_reference.py --data /tmp/ringleader-gpt

Trains the same network as gpt.pt (model.py, same config flags and --seed, so the same
initial weights) on train.bin the way the job's DATASET_FORMAT_TOKENS reads it: windows
of block_size + 1 tokens starting every block_size tokens (input: the first block_size,
target: the same shifted by one), shuffled every epoch, constant-LR Adam, loss from the
model's own forward(idx, targets) (LOSS_KIND_MODEL). --batch-size is the global batch
(job: per-rank batch_size x 2 ranks). Evaluates the mean test loss per token over every
test window each --eval-every steps and at the end, in nats and bits per byte, next to
meta.json's unigram entropy. Stops after --max-minutes (or --epochs); --save PATH
writes the trained model as TorchScript, which generate.py samples from.
"""
import argparse
import json
import math
import os
import sys
import time

import numpy as np
import torch

from model import add_config_flags, build, config_from_args


def load_tokens(path: str) -> torch.Tensor:
    return torch.from_numpy(np.fromfile(path, dtype="<u2").astype(np.int64))


def window_starts(num_tokens: int, block_size: int) -> torch.Tensor:
    """Window w covers tokens [w * block_size, w * block_size + block_size] (block_size + 1)."""
    return torch.arange((num_tokens - 1) // block_size) * block_size


def batch(tokens: torch.Tensor, starts: torch.Tensor, block_size: int):
    rows = tokens[starts[:, None] + torch.arange(block_size + 1)]
    return rows[:, :-1], rows[:, 1:]


@torch.no_grad()
def evaluate(model, tokens, block_size, batch_size=256) -> float:
    """Mean cross-entropy per target token over every test window, in nats."""
    model.eval()
    starts = window_starts(len(tokens), block_size)
    total = 0.0
    for i in range(0, len(starts), batch_size):
        x, y = batch(tokens, starts[i:i + batch_size], block_size)
        _, loss = model(x, y)
        total += loss.item() * y.numel()
    model.train()
    return total / (len(starts) * block_size)


def report(step, tokens_seen, seconds, train_seconds, train_loss, test_loss, unigram_bits):
    """seconds: wall time so far; train_seconds: the part of it not spent evaluating."""
    bits = test_loss / math.log(2)
    print(f"step {step}: tokens {tokens_seen} train_loss {train_loss:.4f} test_loss {test_loss:.4f} nats "
          f"= {bits:.4f} bits/byte ({(bits / unigram_bits - 1) * 100:+.1f}% vs unigram "
          f"{unigram_bits:.4f}) time_s {seconds:.0f} train_tokens/s {tokens_seen / train_seconds:.0f}", flush=True)


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", default="/tmp/ringleader-gpt", help="prepare.py's output directory")
    p.add_argument("--seed", type=int, default=42, help="initial weights and shuffling")
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--batch-size", type=int, default=32, help="global batch (job: per-rank x 2)")
    p.add_argument("--lr", type=float, default=1e-3, help="constant Adam learning rate")
    p.add_argument("--threads", type=int, default=2, help="torch.set_num_threads")
    p.add_argument("--eval-every", type=int, default=500, help="steps between test evaluations")
    p.add_argument("--max-minutes", type=float, default=10.0, help="stop training after this")
    p.add_argument("--bench", type=int, default=0, metavar="N", help="time N steps and exit")
    p.add_argument("--save", default="", metavar="PATH",
                   help="save the trained model as TorchScript (for generate.py)")
    add_config_flags(p)
    return p.parse_args(argv)


def main(argv=None) -> None:
    args = parse_args(argv)
    torch.set_num_threads(args.threads)
    cfg = config_from_args(args)
    model = build(cfg, args.seed)
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    train = load_tokens(os.path.join(args.data, "train.bin"))
    test = load_tokens(os.path.join(args.data, "test.bin"))
    with open(os.path.join(args.data, "meta.json")) as f:
        unigram_bits = json.load(f)["unigram_bits_per_byte"]
    starts = window_starts(len(train), cfg.block_size)
    generator = torch.Generator()
    step, tokens_seen, smooth, reported = 0, 0, None, -1
    begin = time.perf_counter()
    eval_seconds = 0.0

    def evaluate_and_report():
        nonlocal eval_seconds, reported
        start = time.perf_counter()
        test_loss = evaluate(model, test, cfg.block_size)
        eval_seconds += time.perf_counter() - start
        now = time.perf_counter() - begin
        report(step, tokens_seen, now, now - eval_seconds, smooth, test_loss, unigram_bits)
        reported = step

    stop = False
    for epoch in range(args.epochs):
        generator.manual_seed(args.seed + epoch)  # DistributedSampler: seed + epoch
        order = starts[torch.randperm(len(starts), generator=generator)]
        for i in range(0, len(order), args.batch_size):
            x, y = batch(train, order[i:i + args.batch_size], cfg.block_size)
            _, loss = model(x, y)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            step += 1
            tokens_seen += y.numel()
            smooth = loss.item() if smooth is None else 0.98 * smooth + 0.02 * loss.item()
            seconds = time.perf_counter() - begin
            if args.bench and step == args.bench:
                print(f"bench: {step} steps of batch {args.batch_size} x {cfg.block_size}: "
                      f"{seconds / step * 1000:.1f} ms/step, {tokens_seen / seconds:.0f} tokens/s")
                return
            stop = seconds > args.max_minutes * 60
            if step % args.eval_every == 0 or stop:
                evaluate_and_report()
            if stop:
                break
        print(f"epoch {epoch + 1} done at step {step}", flush=True)
        if stop:
            break
    if reported != step:
        evaluate_and_report()
    if args.save:
        torch.jit.script(model).save(args.save)
        print(f"saved {args.save}")


if __name__ == "__main__":
    main(sys.argv[1:])
