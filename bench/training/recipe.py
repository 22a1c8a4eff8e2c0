"""A job file's training recipe in PyTorch, as Ringleader's worker applies it.

bench/training/train_ddp.py trains the example workloads with PyTorch DDP from the same
job file Ringleader runs (bench/common/example_job.py reads it into a dict); for the
comparison to be fair the DDP side has to compute what the worker computes:

- optimizer (worker/model/optimizer.cc): SGD (momentum, Nesterov), Adam (L2
  decay) or AdamW (decoupled decay); betas and eps as in the job, torch's
  defaults when unset; with no_decay_bias_and_norm two param groups, the
  tensors of fewer than 2 dimensions without weight decay;
- learning rate (worker/train/lr_schedule.cc): a pure function of the global
  optimizer step, set on every group before each optimizer step; the decay
  horizon is decay_steps, else the job's planned optimizer steps
  (worker/train/step_plan.cc: epochs x steps per epoch at this world size);
- clip_grad_norm: torch.nn.utils.clip_grad_norm_ on the averaged gradients
  (DDP has all-reduced them when backward returns), before the step;
- precision PRECISION_BF16_MIXED: the forward under torch.autocast('cpu',
  bfloat16), the loss and metrics in float32 from float32 outputs
  (worker/model/model.cc), with float32 rules for layer_norm and group_norm
  on AutocastCPU (register_fp32_norms).
"""
import contextlib
import math

import torch

_SCHEDULE_KINDS = {"LR_SCHEDULE_KIND_UNSPECIFIED", "LR_SCHEDULE_KIND_CONSTANT",
                   "LR_SCHEDULE_KIND_STEP", "LR_SCHEDULE_KIND_COSINE",
                   "LR_SCHEDULE_KIND_LINEAR"}


def decay_horizon(schedule, planned_steps):
    """decay_steps when set, else the job's planned optimizer steps."""
    decay = int(schedule.get("decay_steps", 0))
    return decay if decay > 0 else planned_steps


def lr_at(schedule, lr, step, planned_steps):
    """The learning rate of optimizer step `step` (0-based) for peak rate lr:
    worker/train/lr_schedule.cc's LearningRateAt, formula for formula."""
    kind = schedule.get("kind", "LR_SCHEDULE_KIND_UNSPECIFIED")
    if kind not in _SCHEDULE_KINDS:
        raise ValueError(f"unknown lr_schedule.kind {kind}")
    warmup = max(0, int(schedule.get("warmup_steps", 0)))
    # (t + 1) / W: the first step already moves, step W - 1 is at the peak.
    if step < warmup:
        return lr * (step + 1) / warmup
    floor, t = float(schedule.get("min_lr", 0.0)), step - warmup
    if kind == "LR_SCHEDULE_KIND_STEP":
        gamma = float(schedule.get("gamma", 0.0)) or 0.1
        return max(floor, lr * gamma ** (t // max(1, int(schedule.get("step_size", 0)))))
    if kind in ("LR_SCHEDULE_KIND_COSINE", "LR_SCHEDULE_KIND_LINEAR"):
        horizon = decay_horizon(schedule, planned_steps)
        if step >= horizon:
            return floor
        p = t / (horizon - warmup)
        if kind == "LR_SCHEDULE_KIND_LINEAR":
            return lr - (lr - floor) * p
        return floor + (lr - floor) * 0.5 * (1 + math.cos(math.pi * p))
    return lr


def planned_steps(train_size, world, batch, epochs, drop_last=False, accumulate=1):
    """A job's optimizer steps from its first on at a fixed world size
    (worker/train/step_plan.cc): epochs x the loader's batches per epoch
    (ceil(shard / per-rank batch), DistributedSampler's shard) over the
    accumulation steps, rounded up."""
    shard = train_size // world if drop_last else -(-train_size // world)
    batches = -(-shard // batch)
    return epochs * -(-batches // max(1, accumulate))


def param_groups(params, spec):
    """One group, or with no_decay_bias_and_norm the tensors of 2+ dimensions
    (matrix and convolution weights, embeddings) decayed and the rest
    (biases, norm weights) not, as nanoGPT's configure_optimizers."""
    params = list(params)
    if not spec.get("no_decay_bias_and_norm", False):
        return [{"params": params}]
    decay = [p for p in params if p.dim() >= 2]
    no_decay = [p for p in params if p.dim() < 2]
    return ([{"params": decay}] if decay else []) + \
        ([{"params": no_decay, "weight_decay": 0.0}] if no_decay else [])


def make_optimizer(params, spec):
    """The job's optimizer (OptimizerSpec as a dict) over params."""
    kind = spec["kind"]
    lr, wd = float(spec["learning_rate"]), float(spec.get("weight_decay", 0.0))
    groups = param_groups(params, spec)
    if kind == "OPTIMIZER_KIND_SGD":
        return torch.optim.SGD(groups, lr=lr, weight_decay=wd,
                               momentum=float(spec.get("momentum", 0.0)),
                               nesterov=bool(spec.get("nesterov", False)))
    adam = {"OPTIMIZER_KIND_ADAM": torch.optim.Adam,
            "OPTIMIZER_KIND_ADAMW": torch.optim.AdamW}.get(kind)
    if adam is None:
        raise ValueError(f"unknown optimizer.kind {kind}")
    # weight_decay always given: AdamW's own default is 0.01, the job's 0.
    return adam(groups, lr=lr, weight_decay=wd, eps=float(spec.get("eps", 1e-8)),
                betas=(float(spec.get("beta1", 0.9)), float(spec.get("beta2", 0.999))))


def set_lr(optimizer, lr):
    for group in optimizer.param_groups:
        group["lr"] = lr


def bf16(job):
    """Whether the job asks for bf16 mixed precision."""
    return job.get("precision", "PRECISION_FP32") == "PRECISION_BF16_MIXED"


_fp32_norms = None


def register_fp32_norms():
    """Float32 rules for layer_norm and group_norm under CPU autocast, as
    worker/model/autocast.cc registers them in the worker. torch 1.13's CPU
    autocast has none (its CUDA autocast has), and their CPU kernels reject a
    bfloat16 input with float32 weights ("expected scalar type BFloat16 but
    found Float"), so under torch.autocast('cpu') any norm fed by a matrix
    product or a convolution fails in Python as in C++. (The example GPT's
    LayerNorms read its residual stream, which stays float32 - float32
    embeddings plus bfloat16 branches promote - so it would run without
    them; with them both sides take the same rule whatever the model.)
    Idempotent: the dispatcher refuses a second kernel for the same key."""
    global _fp32_norms
    if _fp32_norms is not None:
        return
    lib = torch.library.Library("aten", "IMPL")
    lib.impl("layer_norm", _layer_norm_fp32, "AutocastCPU")
    lib.impl("group_norm", _group_norm_fp32, "AutocastCPU")
    _fp32_norms = lib  # The registrations live as long as the Library object.


def _fp32(t):
    return None if t is None else t.float()


def _layer_norm_fp32(input, normalized_shape, weight=None, bias=None, eps=1e-5,
                     cudnn_enable=True):
    # CUDA autocast's fp32 policy: inputs to float32, the op run with
    # autocast off (which also keeps this kernel from calling itself).
    with torch.autocast("cpu", enabled=False):
        return torch.layer_norm(input.float(), normalized_shape, _fp32(weight), _fp32(bias),
                                eps, cudnn_enable)


def _group_norm_fp32(input, num_groups, weight=None, bias=None, eps=1e-5,
                     cudnn_enabled=True):
    with torch.autocast("cpu", enabled=False):
        return torch.group_norm(input.float(), num_groups, _fp32(weight), _fp32(bias),
                                eps, cudnn_enabled)


def autocast(enabled):
    """The forward's context: bf16 autocast on the CPU, or nothing at all
    (not a disabled autocast, which would still set and restore its state on
    every step of a float32 run)."""
    if not enabled:
        return contextlib.nullcontext()
    return torch.autocast("cpu", dtype=torch.bfloat16)


def clip(parameters, max_norm):
    """Clip to the global L2 norm max_norm (0: off), as the worker after its
    all-reduce; the norm before clipping, or None when off."""
    if not max_norm > 0:
        return None
    return torch.nn.utils.clip_grad_norm_(parameters, max_norm)
