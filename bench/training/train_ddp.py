"""PyTorch DDP, the anchor for bench/training/train_bench.sh.

--model mlp / cnn: Fashion-MNIST with the same models as Ringleader's
built-ins (worker/model/builtin_models.cc), SGD with momentum.
--model resnet / gpt --job JOB: the example workloads (examples/resnet,
examples/gpt) as a PyTorch user writes them: the eager model of the
example's model.py, built with the job's seed (the TorchScript file the job
trains is the same network with the same initial weights), on the job's
files (.npy arrays with the job's transform; token windows of block_size + 1
starting every block_size tokens, as the worker cuts them), the job's task
loss and training recipe (bench/common/example_job.py reads the job file;
bench/training/recipe.py applies it as the worker does: optimizer with its betas, eps,
Nesterov and no-decay group, the learning-rate schedule by global optimizer
step, gradient clipping after the all-reduce, bf16 autocast).

Either way: the same global batch, DistributedSampler (shuffle, the job's
seed, each rank global_batch / world samples per step), DDP's default
buckets (25 MiB; --bucket_cap_mb) and broadcast_buffers, Gloo on 127.0.0.1,
one intra-op thread per rank. Trains --epochs epochs and evaluates on the test split
after each (each rank its DistributedSampler shard, sums pooled with
all_reduce), as a training script's validation loop does. Prints one JSON
line: training samples/s (and tokens/s for a language model) over the first
epoch after a warm-up of --warmup steps (evaluation excluded), each epoch's
test accuracy (classification) or test loss, and the seconds from the first
step to the first evaluation at or above 85% accuracy.
    /usr/bin/python3 bench/training/train_ddp.py --model mlp --world 2 --global_batch 128
    /usr/bin/python3 bench/training/train_ddp.py --model gpt --job JOB --world 2 --global_batch 32
Across hosts (bench/crosshost/crosshost_bench.sh), one rank per process as torchrun
starts them: --rank R --master ADDR:PORT on every host (rank 0 listens on
ADDR:PORT; GLOO_SOCKET_IFNAME names each host's interface), rank 0 prints.
--fashion_dir: another Fashion-MNIST directory (a subset in the same IDX
files) for --model mlp / cnn.
"""
import argparse
import gzip
import json
import os
import socket
import sys
import time

import numpy as np
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
import torch.nn.functional as F

import recipe  # bench/training/recipe.py

DATA = "/usr/share/datasets/fashion-mnist"
HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = os.path.join(HERE, "..", "..", "examples")
COMMON = os.path.join(HERE, "..", "common")  # example_job.py


def idx(path):
    with gzip.open(path, "rb") as f:
        raw = f.read()
    ndim = raw[3]
    dims = [int.from_bytes(raw[4 + 4 * i:8 + 4 * i], "big") for i in range(ndim)]
    return np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * ndim).reshape(dims)


class Mlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc0, self.fc1, self.fc2 = nn.Linear(784, 256), nn.Linear(256, 128), nn.Linear(128, 10)

    def forward(self, x):
        x = x.flatten(1)
        return self.fc2(F.relu(self.fc1(F.relu(self.fc0(x)))))


class Cnn(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1, self.conv2 = nn.Conv2d(1, 16, 5), nn.Conv2d(16, 32, 5)
        self.fc1, self.fc2 = nn.Linear(32 * 4 * 4, 128), nn.Linear(128, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2).flatten(1)
        return self.fc2(F.relu(self.fc1(x)))


class NhwcCnn(Cnn):
    """The CNN as Ringleader's worker runs it on CPU (--nhwc): the input in
    channels-last strides, so every activation is channels-last, and ReLU
    after each pooling (the same values and gradients)."""

    def forward(self, x):
        n, c, h, w = x.shape
        if c == 1 and x.is_contiguous():
            x = x.as_strided(x.shape, (h * w, 1, w, 1))
        else:
            x = x.contiguous(memory_format=torch.channels_last)
        x = F.relu(F.max_pool2d(self.conv1(x), 2))
        x = F.relu(F.max_pool2d(self.conv2(x), 2)).flatten(1)
        return self.fc2(F.relu(self.fc1(x)))


def fashion_mnist(args):
    """(model, train set, test set, task, job, tokens per sample) of --model
    mlp / cnn; the job: train_bench.sh's write_spec's optimizer, as a dict."""
    data = args.fashion_dir
    images = torch.from_numpy(idx(f"{data}/train-images-idx3-ubyte.gz").copy()).float().div_(255)
    images = images.sub_(0.2860).div_(0.3530).unsqueeze(1)
    labels = torch.from_numpy(idx(f"{data}/train-labels-idx1-ubyte.gz").astype(np.int64))
    test_images = torch.from_numpy(idx(f"{data}/t10k-images-idx3-ubyte.gz").copy()).float().div_(255)
    test_images = test_images.sub_(0.2860).div_(0.3530).unsqueeze(1)
    test_labels = torch.from_numpy(idx(f"{data}/t10k-labels-idx1-ubyte.gz").astype(np.int64))
    torch.manual_seed(1)
    net = Mlp() if args.model == "mlp" else NhwcCnn() if args.nhwc else Cnn()
    train = Samples(len(images), lambda ids: (images[ids], labels[ids]))
    test = Samples(len(test_images), lambda ids: (test_images[ids], test_labels[ids]))
    job = {"optimizer": {"kind": "OPTIMIZER_KIND_SGD", "learning_rate": 0.05, "momentum": 0.9}}
    return net, train, test, CLASSIFICATION, job, 1


class Samples:
    """A split: its size and a function from sample ids to (inputs, targets) batches."""

    def __init__(self, size, gather):
        self.size, self.gather = size, gather


class Task:
    """A task's loss in two parts, as the worker splits it: forward (under
    autocast when the job asks) returns the model's output or, for a model
    that computes its own loss, that loss; loss(output, y) -> (loss, logits
    or None) runs outside autocast, on float32."""

    def __init__(self, forward, loss, accuracy):
        self.forward, self.loss, self.accuracy = forward, loss, accuracy


CLASSIFICATION = Task(lambda model, x, y: model(x),
                      lambda logits, y: (F.cross_entropy(logits, y), logits), True)
LANGUAGE_MODEL = Task(lambda model, x, y: model(x),
                      lambda logits, y: (F.cross_entropy(logits.flatten(0, 1), y.flatten()),
                                         None), False)
MODEL_LOSS = Task(lambda model, x, y: model(x, y)[1], lambda loss, y: (loss, None), False)
# --nhwc for the ResNet: its images channels-last, as the worker hands them to
# a convolutional model on the CPU (worker/train/step/model_probe.h).
CLASSIFICATION_NHWC = Task(
    lambda model, x, y: model(x.contiguous(memory_format=torch.channels_last)),
    CLASSIFICATION.loss, True)


def batch_loss(model, task, x, y, bf16):
    """(loss, logits or None) of a batch: the forward under bf16 autocast
    when asked, the loss in float32 from float32 outputs, as the worker."""
    with recipe.autocast(bf16):
        out = task.forward(model, x, y)
    return task.loss(out.float(), y)


def npy_split(split, transform):
    """Samples of a job's NPY split (one input), transformed as the worker does."""
    paths = split["inputs"]
    if isinstance(paths, list):
        if len(paths) != 1:
            raise SystemExit("train_ddp.py: one input per sample only")
        paths = paths[0]
    x = torch.from_numpy(np.load(paths))
    y = torch.from_numpy(np.load(split["targets"]).astype(np.int64))
    scale = float(transform.get("scale", 1.0))
    c = x.shape[1]
    as_list = lambda v, default: [float(a) for a in (v if isinstance(v, list) else [v])] \
        if v is not None else [default] * c
    mean = torch.tensor(as_list(transform.get("mean"), 0.0)).view(1, -1, *([1] * (x.dim() - 2)))
    std = torch.tensor(as_list(transform.get("std"), 1.0)).view(1, -1, *([1] * (x.dim() - 2)))
    return Samples(len(x), lambda ids: ((x[ids].float() * scale - mean) / std, y[ids]))


def token_split(path, block):
    """Windows of block + 1 tokens starting every block tokens (worker/data/token_dataset.h)."""
    tokens = torch.from_numpy(np.fromfile(path, dtype="<u2").astype(np.int64))
    starts = torch.arange((len(tokens) - 1) // block) * block
    offsets = torch.arange(block + 1)

    def gather(ids):
        rows = tokens[starts[ids][:, None] + offsets]
        return rows[:, :-1], rows[:, 1:]
    return Samples(len(starts), gather)


def example(args):
    """(model, train set, test set, task, job, tokens per sample) of the
    example workload --model resnet / gpt, from the job file --job."""
    sys.path.insert(0, os.path.join(EXAMPLES, args.model))
    import model as example_model  # examples/<model>/model.py
    sys.path.insert(0, COMMON)
    import example_job
    job = example_job.load(args.job)
    check_supported(job)
    seed = int(job.get("seed", 0))
    data, task = job["dataset"], job.get("task", {})
    if args.model == "resnet":
        net = example_model.build(args.widths, args.blocks, seed)
        train = npy_split(data["train"], data.get("transform", {}))
        test = npy_split(data["test"], data.get("transform", {}))
        per_sample = 1
    else:
        cfg = example_model.GPTConfig(block_size=int(data["block_size"]))
        net = example_model.build(cfg, seed, logits_only=task.get("loss") != "LOSS_KIND_MODEL")
        train = token_split(data["train_tokens"], cfg.block_size)
        test = token_split(data["test_tokens"], cfg.block_size)
        per_sample = cfg.block_size
    if task.get("loss") == "LOSS_KIND_MODEL":
        kind = MODEL_LOSS
    elif task.get("kind") == "TASK_KIND_LANGUAGE_MODEL":
        kind = LANGUAGE_MODEL
    else:
        kind = CLASSIFICATION_NHWC if args.nhwc and args.model == "resnet" else CLASSIFICATION
    return net, train, test, kind, job, per_sample


def check_supported(job):
    """Stops on a job field this script would silently not apply."""
    if job.get("dataset", {}).get("augmentation"):
        raise SystemExit("train_ddp.py: dataset.augmentation is not implemented here")
    if int(job.get("gradient_accumulation_steps", 0)) > 1:
        raise SystemExit("train_ddp.py: gradient_accumulation_steps is not implemented here")
    if job.get("dataset", {}).get("drop_last"):
        raise SystemExit("train_ddp.py: dataset.drop_last is not implemented here")


class Run:
    """One rank's training: the DDP model, the job's recipe, its data."""

    def __init__(self, rank, args):
        self.rank, self.args = rank, args
        net, self.train, self.test, self.task, job, self.per_sample = (
            fashion_mnist(args) if args.model in ("mlp", "cnn") else example(args))
        self.bf16 = recipe.bf16(job)
        if self.bf16:
            recipe.register_fp32_norms()
        self.model = nn.parallel.DistributedDataParallel(net, bucket_cap_mb=args.bucket_cap_mb)
        self.opt = recipe.make_optimizer(self.model.parameters(), job["optimizer"])
        self.lr = float(job["optimizer"]["learning_rate"])
        self.schedule = job.get("lr_schedule", {})
        self.max_norm = float(job.get("clip_grad_norm", 0.0))
        self.per_rank = args.global_batch // args.world
        # The worker's default decay horizon: this run's epochs x its steps
        # per epoch at this world size.
        self.planned = recipe.planned_steps(self.train.size, args.world, self.per_rank,
                                            args.epochs)
        self.step_count = 0  # global optimizer steps, as the worker counts them
        seed = 1 if args.model in ("mlp", "cnn") else args.seed
        self.sampler = torch.utils.data.distributed.DistributedSampler(
            range(self.train.size), num_replicas=args.world, rank=rank, shuffle=True, seed=seed)

    def step(self, x, y):
        """One optimizer step: forward, backward (DDP all-reduces), clipping,
        the scheduled learning rate, the optimizer. Returns the loss."""
        loss, _ = batch_loss(self.model, self.task, x, y, self.bf16)
        self.opt.zero_grad()
        loss.backward()
        recipe.clip(self.model.parameters(), self.max_norm)
        recipe.set_lr(self.opt, recipe.lr_at(self.schedule, self.lr, self.step_count,
                                             self.planned))
        self.opt.step()
        self.step_count += 1
        return loss.detach()

    def epoch(self, epoch):
        """Trains one epoch: (mean training loss, samples/s after the warm-up
        steps, timed in the first epoch only)."""
        self.sampler.set_epoch(epoch)
        order = torch.tensor(list(iter(self.sampler)), dtype=torch.int64)
        steps = len(order) // self.per_rank
        if self.args.max_steps:
            steps = min(steps, self.args.max_steps)
        warm = min(self.args.warmup, steps // 4)
        start, loss_sum = None, torch.zeros(())
        for s in range(steps):
            if epoch == 0 and s == warm:
                dist.barrier()
                start = time.perf_counter()
            loss_sum += self.step(*self.train.gather(order[s * self.per_rank:
                                                           (s + 1) * self.per_rank]))
        rate = None
        if epoch == 0:
            dist.barrier()
            rate = (steps - warm) * self.args.global_batch / (time.perf_counter() - start)
        return loss_sum.item() / max(1, steps), rate

    def evaluate(self):
        """Pooled test accuracy (classification, else None) and mean loss,
        the forward under the job's precision as the worker evaluates."""
        # As before for the Fashion-MNIST models; the worker's for the examples.
        eval_batch = 1024 if self.args.model in ("mlp", "cnn") else max(256, self.per_rank)
        test_ids = torch.tensor(list(iter(torch.utils.data.distributed.DistributedSampler(
            range(self.test.size), num_replicas=self.args.world, rank=self.rank,
            shuffle=False))), dtype=torch.int64)
        self.model.eval()
        with torch.no_grad():
            sums = torch.zeros(3, dtype=torch.float64)  # correct, loss sum, count
            for i in range(0, len(test_ids), eval_batch):
                ids = test_ids[i:i + eval_batch]
                x, y = self.test.gather(ids)
                loss, logits = batch_loss(self.model, self.task, x, y, self.bf16)
                if logits is not None:
                    sums[0] += (logits.argmax(1) == y).sum()
                sums[1] += loss.item() * len(ids)
                sums[2] += len(ids)
            dist.all_reduce(sums)
        self.model.train()
        acc = (sums[0] / sums[2]).item() if self.task.accuracy else None
        return acc, (sums[1] / sums[2]).item()


def run(rank, args, master):
    if args.cpus:
        # Before any thread starts, so Gloo's threads share the rank's CPU as
        # a pinned ringleader-worker's communicator shares its worker's.
        os.sched_setaffinity(0, {args.cpus[rank % len(args.cpus)]})
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"tcp://{master}",
                            rank=rank, world_size=args.world)
    r = Run(rank, args)
    dist.barrier()
    t_start = time.perf_counter()
    rate, accs, losses, to_85 = 0.0, [], [], None
    for epoch in range(args.epochs):
        train_loss, epoch_rate = r.epoch(epoch)
        rate = rate if epoch_rate is None else epoch_rate
        if args.skip_eval:
            continue
        acc, test_loss = r.evaluate()
        accs.append(acc)
        losses.append(test_loss)
        if to_85 is None and acc is not None and acc >= 0.85:
            to_85 = time.perf_counter() - t_start
    if rank == 0:
        out = {"impl": args.impl, "model": args.model, "repeat": args.repeat,
               "world": args.world, "global_batch": args.global_batch,
               "samples_per_s": rate, "test_accuracy": accs,
               "seconds_to_85": to_85}
        if args.model in ("resnet", "gpt"):
            out.update(test_loss=losses, train_loss=train_loss,
                       tokens_per_sample=r.per_sample, eager=f"examples/{args.model}/model.py")
            if r.per_sample > 1:
                out["tokens_per_s"] = rate * r.per_sample
        print(json.dumps(out), flush=True)
    # Leave without tearing DDP down: in torch 1.13 the process group's
    # destructor (run from DDP's reducer's, with the GIL held) joins its
    # worker thread while that thread waits for the GIL to free a tensor,
    # which hung about one run in 30 here. Every collective is done once all
    # ranks pass this barrier.
    dist.barrier()
    sys.stdout.flush()
    os._exit(0)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--model", choices=["mlp", "cnn", "resnet", "gpt"], required=True)
    p.add_argument("--job", help="resnet / gpt: the job file (bench/common/example_job.py)")
    p.add_argument("--widths", default="16,32,64", help="resnet: as prepare.py made model.pt")
    p.add_argument("--blocks", default="1,1,1", help="resnet: as prepare.py made model.pt")
    p.add_argument("--warmup", type=int, default=20, help="steps before timing")
    p.add_argument("--skip_eval", action="store_true", help="no evaluation")
    p.add_argument("--world", type=int, required=True)
    p.add_argument("--global_batch", type=int, required=True)
    p.add_argument("--max_steps", type=int, default=0)
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--impl", default="pytorch-ddp", help="name in the output")
    p.add_argument("--repeat", type=int, default=1, help="the benchmark's repeat, in the output")
    p.add_argument("--bucket_cap_mb", type=float, default=25, help="DDP's bucket cap")
    p.add_argument("--fashion_dir", default=DATA, help="mlp / cnn: the IDX files' directory")
    p.add_argument("--cpus", default="",
                   help="comma-separated CPUs: rank r runs on the (r mod n)-th, as "
                        "bench/common/lib.sh's run_job pins worker r (default: unpinned)")
    p.add_argument("--rank", type=int, help="run this one rank here (with --master)")
    p.add_argument("--master", help="with --rank: rank 0's ADDR:PORT")
    p.add_argument("--nhwc", action="store_true",
                   help="CNN: channels-last activations and ReLU after pooling, "
                        "as Ringleader's worker runs it on CPU; ResNet: channels-last "
                        "images, as the worker hands them to a convolutional model")
    args = p.parse_args()
    if args.model in ("resnet", "gpt"):
        if not args.job:
            p.error(f"--model {args.model} needs --job")
        sys.path.insert(0, COMMON)
        import example_job
        args.seed = int(example_job.load(args.job).get("seed", 0))
        args.widths = [int(v) for v in args.widths.split(",")]
        args.blocks = [int(v) for v in args.blocks.split(",")]
    if not args.bucket_cap_mb > 0:
        p.error("--bucket_cap_mb must be positive")
    try:
        args.cpus = [int(c) for c in args.cpus.split(",") if c.strip()]
    except ValueError:
        p.error(f"--cpus {args.cpus!r}: not a comma-separated list of CPU numbers")
    if not set(args.cpus) <= os.sched_getaffinity(0):
        p.error(f"--cpus {args.cpus}: this process may run only on {sorted(os.sched_getaffinity(0))}")
    if args.rank is not None:
        if not 0 <= args.rank < args.world or not args.master:
            p.error("--rank R needs 0 <= R < --world and --master ADDR:PORT")
        run(args.rank, args, args.master)
        return
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    mp.start_processes(run, args=(args, f"127.0.0.1:{port}"), nprocs=args.world,
                       start_method="spawn")


if __name__ == "__main__":
    main()
