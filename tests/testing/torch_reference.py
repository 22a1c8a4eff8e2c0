"""What Python's torch computes for the C++ tests to compare with.

Reads one JSON request from the file named by argv[1], writes the JSON
answer to stdout. Requests:
  {"op": "optimizer", "kind": "sgd"|"adam"|"adamw", "options": {...},
   "no_decay": bool, "params": [tensor...], "lrs": [lr per step],
   "grads": [[tensor per param] per step]}
      -> {"params": [tensor...]} after the steps, every param group's lr set
         before each step (as a scheduler does); with no_decay, nanoGPT's
         groups (dim >= 2 decayed, the rest with weight_decay 0).
  {"op": "clip", "params": [tensor...], "grads": [tensor...],
   "max_norm": float}
      -> {"norm": float, "grads": [tensor...]} from clip_grad_norm_.
Tensors are nested lists, float32.
"""
import json
import sys

import torch

OPTIMIZERS = {
    "sgd": torch.optim.SGD,
    "adam": torch.optim.Adam,
    "adamw": torch.optim.AdamW,
}


def tensors(values, grad=False):
    return [torch.tensor(v, dtype=torch.float32, requires_grad=grad)
            for v in values]


def run_optimizer(req):
    params = tensors(req["params"], grad=True)
    if req.get("no_decay"):
        groups = [{"params": [p for p in params if p.dim() >= 2]},
                  {"params": [p for p in params if p.dim() < 2],
                   "weight_decay": 0.0}]
    else:
        groups = [{"params": params}]
    opt = OPTIMIZERS[req["kind"]](groups, **req["options"])
    for lr, grads in zip(req["lrs"], req["grads"]):
        for group in opt.param_groups:
            group["lr"] = lr
        for p, g in zip(params, tensors(grads)):
            p.grad = g
        opt.step()
    return {"params": [p.detach().tolist() for p in params]}


def run_clip(req):
    params = tensors(req["params"], grad=True)
    for p, g in zip(params, tensors(req["grads"])):
        p.grad = g
    norm = torch.nn.utils.clip_grad_norm_(params, req["max_norm"])
    return {"norm": norm.item(), "grads": [p.grad.tolist() for p in params]}


def main():
    with open(sys.argv[1]) as f:
        req = json.load(f)
    run = {"optimizer": run_optimizer, "clip": run_clip}[req["op"]]
    json.dump(run(req), sys.stdout)


if __name__ == "__main__":
    main()
