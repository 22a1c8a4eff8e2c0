"""The example workloads' job files (examples/*/*.textproto) for the training benchmark.

bench/training/train_bench.sh runs examples/resnet and examples/gpt from their own job files, so
that Ringleader and PyTorch DDP (bench/training/train_ddp.py --job) train what a user of the
example trains: this module rewrites a job file for one benchmark configuration, and
reads back the fields DDP needs (data paths, transform, task, optimizer, seed).

    example_job.py SRC OUT --data DIR --world W --batch B [--epochs E] [--transport T]

writes OUT: SRC with its data and model paths moved from SRC's directory (the
directory of model.torchscript_path) to DIR, batch_size B per rank, min_workers =
max_workers = W, epochs E, progress every 10 steps (at most every 100 ms), no export,
evaluate_every_epoch as in SRC, ddp.cpu_transport T (auto, shm or gloo), with
--precision fp32|bf16 that precision, with --recipe NAME the training recipe of a
modern DDP script in place of SRC's optimizer, schedule and clipping (RECIPES), with
--ddp FIELD=VALUE (repeatable) more DdpSpec fields (bucket_cap_bytes=1048576,
gradient_compression=GRADIENT_COMPRESSION_FP16, ...), and with --timeline DIR each
rank's timeline of its first 200 steps written there (timeline_dir).

The reader is a small protobuf text-format parser, enough for these files: messages,
scalar fields, lists, strings and comments (no Python protobuf is needed).
"""
import argparse
import os
import re
import sys

_TOKEN = re.compile(r'\s*(?:#[^\n]*|("(?:[^"\\]|\\.)*")|([\[\]{}:,])|([^\s\[\]{}:,#"]+))')


def _tokens(text):
    pos = 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m or m.end() == pos:
            if text[pos:].strip():
                raise ValueError(f"cannot parse text proto at {text[pos:pos + 30]!r}")
            return
        pos = m.end()
        tok = m.group(1) or m.group(2) or m.group(3)
        if tok:
            yield tok


# The training recipes of modern DDP scripts, for bench/training/train_bench.sh's RECIPE=1,
# in optimizer steps of its one-epoch subsets (100 steps at the job files' global
# batches): a linear warmup of 10 steps, then a cosine down to a tenth of the peak
# at the end of the run (the default horizon: the job's planned steps), gradients
# clipped to a global norm of 1.
RECIPES = {
    # nanoGPT's train.py: AdamW, betas (0.9, 0.95), weight decay 0.1 on the
    # matrices and embeddings only, min_lr = lr / 10, grad_clip 1.0; the peak
    # of its small character-level config (shakespeare_char, 1e-3).
    "nanogpt": """optimizer {
  kind: OPTIMIZER_KIND_ADAMW
  learning_rate: 0.001
  weight_decay: 0.1
  beta1: 0.9
  beta2: 0.95
  no_decay_bias_and_norm: true
}
lr_schedule { kind: LR_SCHEDULE_KIND_COSINE warmup_steps: 10 min_lr: 0.0001 }
clip_grad_norm: 1.0
""",
    # torchvision's classification reference for ResNets: SGD momentum 0.9
    # (its sgd_nesterov variant), lr 0.1 per 256 images scaled to the global
    # batch of 128, no decay on norm weights and biases (--norm-weight-decay 0
    # --bias-weight-decay 0), linear warmup then cosine annealing, and
    # --clip-grad-norm 1; weight decay 5e-4, the usual CIFAR value (and the
    # example's SGD setting before it moved to Adam).
    "torchvision": """optimizer {
  kind: OPTIMIZER_KIND_SGD
  learning_rate: 0.05
  momentum: 0.9
  nesterov: true
  weight_decay: 0.0005
  no_decay_bias_and_norm: true
}
lr_schedule { kind: LR_SCHEDULE_KIND_COSINE warmup_steps: 10 min_lr: 0.005 }
clip_grad_norm: 1.0
""",
}


def _value(tok):
    if tok.startswith('"'):
        return bytes(tok[1:-1], "utf-8").decode("unicode_escape")
    if tok in ("true", "false"):
        return tok == "true"
    try:
        return int(tok)
    except ValueError:
        pass
    try:
        return float(tok)
    except ValueError:
        return tok  # an enum name


def parse(text):
    """A text-format message as a dict; repeated fields are lists, messages dicts."""
    toks = list(_tokens(text))
    i = 0

    def message(end):
        nonlocal i
        out = {}
        while i < len(toks) and toks[i] != end:
            name = toks[i]
            i += 1
            if toks[i] == ":":
                i += 1
            if toks[i] == "{":
                i += 1
                val = message("}")
                i += 1
            elif toks[i] == "[":
                i += 1
                val = []
                while toks[i] != "]":
                    if toks[i] != ",":
                        val.append(_value(toks[i]))
                    i += 1
                i += 1
            else:
                val = _value(toks[i])
                i += 1
            if name in out:  # repeated
                if not isinstance(out[name], list) or isinstance(val, list):
                    out[name] = [out[name]]
                out[name].append(val)
            else:
                out[name] = val
        return out

    return message(None)


def load(path):
    with open(path) as f:
        return parse(f.read())


def _drop_field(text, name):
    """text without the top-level field `name` (a scalar line or a { } block)."""
    lines, out, depth, skipping = text.splitlines(keepends=True), [], 0, False
    for line in lines:
        code = line.split("#", 1)[0]
        if not skipping and depth == 0 and re.match(rf"\s*{name}\s*(:|\{{)", code):
            if "{" in code and code.count("{") > code.count("}"):
                skipping, block = True, code.count("{") - code.count("}")
            continue
        if skipping:
            block += code.count("{") - code.count("}")
            if block <= 0:
                skipping = False
            continue
        depth += code.count("{") - code.count("}")
        out.append(line)
    return "".join(out)


def ddp_field(text):
    """FIELD=VALUE (a DdpSpec field) as text-format "FIELD: VALUE"."""
    name, sep, value = text.partition("=")
    if not sep or not re.fullmatch(r"[a-z_][a-z0-9_]*", name) or not value \
            or not re.fullmatch(r'[A-Za-z0-9_.+-]+|"[^"\\]*"', value):
        raise argparse.ArgumentTypeError(f"--ddp wants FIELD=VALUE, got {text!r}")
    return f"{name}: {value}"


def rewrite(src_text, data_dir, world, batch, epochs=None, transport="auto", precision=None,
            recipe=None, ddp_fields=(), timeline_dir=None):
    spec = parse(src_text)
    old_dir = os.path.dirname(spec["model"]["torchscript_path"])
    text = src_text.replace(old_dir + "/", data_dir.rstrip("/") + "/")
    dropped = (("batch_size", "min_workers", "max_workers", "export", "progress_every_steps",
                "progress_min_interval_ms", "ddp", "name") + (("epochs",) if epochs else ())
               + (("precision",) if precision else ())
               + (("optimizer", "lr_schedule", "clip_grad_norm") if recipe else ())
               + (("timeline_dir", "timeline_steps") if timeline_dir else ()))
    for name in dropped:
        text = _drop_field(text, name)
    text += (f'name: "train-bench"\nbatch_size: {batch}\nmin_workers: {world}\n'
             f"max_workers: {world}\nprogress_every_steps: 10\nprogress_min_interval_ms: 100\n"
             f"ddp {{ cpu_transport: CPU_TRANSPORT_{transport.upper()} "
             + "".join(f"{f} " for f in ddp_fields) + "}\n")
    if epochs:
        text += f"epochs: {epochs}\n"
    if precision:
        text += "precision: " + {"fp32": "PRECISION_FP32", "bf16": "PRECISION_BF16_MIXED"}[precision] + "\n"
    if recipe:
        text += RECIPES[recipe]
    if timeline_dir:
        text += f'timeline_dir: "{timeline_dir}"\ntimeline_steps: 200\n'
    parse(text)  # still well-formed
    return text


def main(argv):
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("src")
    p.add_argument("out")
    p.add_argument("--data", required=True, help="where prepare.py wrote the files")
    p.add_argument("--world", type=int, required=True)
    p.add_argument("--batch", type=int, required=True, help="per rank")
    p.add_argument("--epochs", type=int, default=0, help="0: as in SRC")
    p.add_argument("--transport", default="auto", choices=["auto", "shm", "gloo"])
    p.add_argument("--precision", choices=["fp32", "bf16"], help="default: as in SRC")
    p.add_argument("--recipe", choices=sorted(RECIPES),
                   help="optimizer, lr_schedule and clip_grad_norm (default: as in SRC)")
    p.add_argument("--ddp", type=ddp_field, action="append", default=[],
                   metavar="FIELD=VALUE", help="a DdpSpec field (repeatable)")
    p.add_argument("--timeline", metavar="DIR", help="timeline_dir (absolute)")
    args = p.parse_args(argv)
    with open(args.src) as f:
        text = rewrite(f.read(), args.data, args.world, args.batch, args.epochs or None,
                       args.transport, args.precision, args.recipe, args.ddp, args.timeline)
    with open(args.out, "w") as f:
        f.write(text)


if __name__ == "__main__":
    main(sys.argv[1:])
