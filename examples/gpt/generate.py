"""Sample bytes from a GPT exported as TorchScript (prepare.py's gpt.pt, or the job's export).

    /usr/bin/python3 examples/gpt/generate.py --model /tmp/ringleader-gpt/trained.pt \
        --prompt "Q: What is" --num-bytes 300 --temperature 0.8 --top-k 40 --seed 1

Works with both exports: forward(idx, targets=None) -> (logits, loss) and the
--logits-only forward(idx) -> logits. The context is cropped to the model's block_size
attribute (or --block-size if the module has none). Output bytes are decoded as UTF-8
with errors='replace'.
"""
import argparse
import sys

import torch
from torch import Tensor


def next_logits(model, idx: Tensor) -> Tensor:
    """Logits [B, V] for the position after idx's last token, whichever export this is."""
    out = model(idx)
    if isinstance(out, tuple):  # (logits, loss): loss is None without targets
        out = out[0]
    return out[:, -1, :]


def sample(logits: Tensor, temperature: float, top_k: int, generator: torch.Generator) -> Tensor:
    if temperature <= 0:  # greedy
        return logits.argmax(dim=-1, keepdim=True)
    logits = logits / temperature
    if 0 < top_k < logits.size(-1):
        kth = torch.topk(logits, top_k).values[:, -1:]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    probs = torch.softmax(logits, dim=-1)
    return torch.multinomial(probs, 1, generator=generator)


@torch.no_grad()
def generate(model, prompt: bytes, num_bytes: int, block_size: int, temperature: float,
             top_k: int, seed: int) -> bytes:
    generator = torch.Generator().manual_seed(seed)
    idx = torch.tensor([list(prompt)], dtype=torch.long)
    for _ in range(num_bytes):
        logits = next_logits(model, idx[:, -block_size:])
        idx = torch.cat([idx, sample(logits, temperature, top_k, generator)], dim=1)
    return bytes(idx[0].tolist())


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", default="/tmp/ringleader-gpt/trained.pt", help="TorchScript file")
    p.add_argument("--prompt", default="\n", help="text to continue (UTF-8)")
    p.add_argument("--num-bytes", type=int, default=300, help="bytes to generate")
    p.add_argument("--temperature", type=float, default=0.8, help="0: greedy")
    p.add_argument("--top-k", type=int, default=40, help="sample among the k likeliest (0: all)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--block-size", type=int, default=0, help="context length if the module has none")
    p.add_argument("--threads", type=int, default=1, help="torch.set_num_threads")
    return p.parse_args(argv)


def main(argv=None) -> None:
    args = parse_args(argv)
    torch.set_num_threads(args.threads)
    model = torch.jit.load(args.model, map_location="cpu")
    model.eval()
    block_size = args.block_size or int(getattr(model, "block_size", 0))
    if block_size <= 0:
        sys.exit(f"{args.model} has no block_size attribute: pass --block-size")
    prompt = args.prompt.encode("utf-8")
    if not prompt:
        sys.exit("--prompt must not be empty")
    out = generate(model, prompt, args.num_bytes, block_size, args.temperature, args.top_k, args.seed)
    print(out.decode("utf-8", errors="replace"))


if __name__ == "__main__":
    main(sys.argv[1:])
