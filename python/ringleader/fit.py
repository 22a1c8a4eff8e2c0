"""``ringleader.fit``: train a PyTorch model on the cluster, get it back."""
from __future__ import annotations

import contextlib
import os
import pathlib
import secrets
import sys
import time
from typing import Any, Callable, Dict, Iterator, Optional, Union

import torch
from torch import nn

from . import images as images_mod
from . import model as model_mod
from . import plan as plan_mod
from . import progress as display_mod
from . import safetensors_io, store
from .data import check_token_range
from .client import COORDINATOR_ENV, Client, check_succeeded, state_name
from .errors import DataError, Error, InvalidSpecError
from .local import LocalCluster
from .result import Result
from .v1 import job_pb2

DATA_DIR_ENV = "RINGLEADER_DATA_DIR"


def fit(model: Union[nn.Module, Callable[[], nn.Module]],
        train: Any, *, test: Any = None, task: str = "classification",
        optimizer: str = "adam", lr: float = 1e-3, epochs: int = 1,
        batch_size: int = 32, workers: int = 2,
        local: Optional[bool] = None,
        data_dir: Optional[Union[str, os.PathLike]] = None,
        block_size: Optional[int] = None, jit: str = "script",
        client: Optional[Union[Client, str]] = None, progress: bool = True,
        **job_fields: Any) -> Result:
    r"""Trains ``model`` on ``train`` with data-parallel workers; returns it.

    The Ringleader form of a DDP script's ``mp.spawn(train, nprocs=workers)``
    with a ``DistributedSampler`` and a ``DataLoader``: ``model`` is scripted
    with ``torch.jit.script``, the data is written once as ``.npy`` files
    under ``data_dir``, a job runs on ``workers`` ranks (each a worker
    daemon: forward, backward, gradients all-reduced in buckets, optimizer
    step), its progress is shown, and the trained model comes back.

    Args:
        model (nn.Module or Callable[[], nn.Module]): the model, or a
            ``model_fn`` that builds it. ``forward`` takes one tensor per
            input field and returns the output (logits ``[B, C]`` or
            ``[B, T, C]``, regression values); or, when its argument after
            the inputs is named ``targets`` (or ``labels``, ``y``), the
            loss itself: a scalar, ``(logits, loss)`` or a dict with
            ``"loss"`` (``loss="model"``, nanoGPT's and Hugging Face's way).
        train: the training split: a map-style ``Dataset`` whose items are
            ``(input, ..., target)`` tuples of tensors or numbers, as
            ``DataLoader`` collates them; a ``TensorDataset``; NumPy arrays
            or tensors ``(x, y)``; for ``task="language_model"``, a 1-D array
            of token ids. Or image files where they are (read by the
            workers, never copied): a torchvision ``ImageFolder`` root
            (``"/data/train"``, one folder per class) or WebDataset tar
            shards (``"/data/train-{000000..000099}.tar"`` or a list), each
            sample float ``[3, size, size]`` after torchvision's reference
            recipe (``image={"size": 224}``, ``horizontal_flip=True``,
            ``transform={"mean": [...], "std": [...]}``, ``skip_corrupt=True``).
        test: the test split, in the same form (optional). Evaluated after
            every epoch: ``Result.metrics``.
        task (str): ``"classification"`` (cross-entropy; accuracy, top-5),
            ``"language_model"`` (next-token cross-entropy over windows of
            ``block_size + 1`` tokens; perplexity, bits per token) or
            ``"regression"`` (MSE; mse, mae).
        optimizer (str): ``"sgd"``, ``"adam"`` or ``"adamw"``.
        lr (float): the peak learning rate.
        epochs (int): passes over the training split.
        batch_size (int): samples per rank and step, as ``DataLoader``'s
            under DDP (the global batch is ``batch_size * workers``).
        workers (int): ranks. ``min_workers``/``max_workers`` keywords make
            the job elastic on a shared cluster.
        local (bool, optional): ``True``: start a coordinator and
            ``workers`` worker daemons on this machine for this call (as
            :class:`LocalCluster`); ``False``: use the coordinator of
            ``client`` or ``$RINGLEADER_COORDINATOR``; ``None`` (default):
            that coordinator when one is given, else a local cluster.
        data_dir (str, optional): where the data, the scripted model and the
            exports are written: a directory every worker reads at the same
            path (shared storage for a remote cluster). Default:
            ``$RINGLEADER_DATA_DIR``, else ``~/.cache/ringleader``. Data is
            named by a fingerprint of its content: a second call with the
            same data writes nothing.
        block_size (int, optional): tokens of context per sample, for a
            language model; default: the model's ``block_size`` attribute.
        jit (str): ``"script"`` (``torch.jit.script``, default) or
            ``"trace"`` (``torch.jit.trace`` on the first training samples),
            for a model that cannot be scripted.
        client (Client or str, optional): the coordinator to use (a
            :class:`Client` or ``"HOST:PORT"``).
        progress (bool): show a progress bar (a line per change off a
            terminal) and each evaluation.
        **job_fields: any other ``JobSpec`` field by keyword, checked before
            anything is written: ``momentum=0.9``, ``weight_decay=0.05``,
            ``lr_schedule="cosine"`` ... ``warmup_steps=100``,
            ``clip_grad_norm=1.0``, ``precision="bf16"``,
            ``gradient_compression="bf16"``, ``checkpoint_dir=...``,
            ``resume=True``, ``name="my-run"``, ``seed=1``, ``shuffle=False``,
            ``transform={"scale": 1/255}``. :func:`ringleader.spec_keywords`
            lists them all; nested fields also as ``lr_schedule__kind``.

    Returns:
        Result: ``.model`` (the trained module on the CPU, in eval mode),
        ``.state_dict``, ``.metrics`` (a dict per evaluated epoch, e.g.
        ``{"epoch": 1, "accuracy": 0.87, "test_loss": 0.36}``),
        ``.final_metrics``, ``.job_id``.

    Raises:
        ModelScriptError: the model cannot be scripted (torch's reason), or
            does not run on the data's shape.
        DataError: an item of another shape or dtype (naming its index), a
            token id outside the model's vocabulary (its position), data of
            a kind fit cannot write.
        InvalidSpecError: a wrong keyword or value, naming it; the
            coordinator's validator lists every violation.
        JobFailedError: the job failed: ``.rank`` and ``.reason`` say why.
        KeyboardInterrupt: Ctrl-C; the job is cancelled first.

    Example::

        >>> import ringleader, torch
        >>> from torch import nn
        >>> x, y = torch.randn(1024, 20), torch.randint(0, 3, (1024,))
        >>> model = nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, 3))
        >>> result = ringleader.fit(model, (x, y), test=(x, y), epochs=2,
        ...                         workers=2, lr=1e-2)
        >>> result.metrics[-1]["accuracy"]
        0.61
    """
    if local not in (None, True, False):
        raise InvalidSpecError(f"local must be None, True or False, not {local!r}")
    clock = _Stopwatch()
    spec = plan_mod.base_spec(task, optimizer, lr, epochs, batch_size, workers,
                              job_fields)
    plan = images_mod.plan(train, test) or plan_mod.plan_data(train, test, task)
    prepared = _prepare_model(model, jit, spec, plan, block_size)
    if not spec.name:
        spec.name = model_mod.job_name(prepared)
    if test is not None and "evaluate_every_epoch" not in job_fields:
        spec.evaluate_every_epoch = True
    clock.lap("prepare")
    with _coordinator(local, client, spec.max_workers) as (coordinator, ready):
        clock.lap("start_cluster")
        root = _data_dir(data_dir)
        job_dir = _write_inputs(spec, plan, prepared, root, progress)
        clock.lap("write")
        ready()  # The workers started while the data was written.
        clock.lap("start_cluster")
        final = _run(coordinator, spec, progress)
        clock.lap("job")
    clock.lap("stop_cluster")
    result = _result(final, prepared, root, job_dir)
    clock.lap("load")
    result.timings = clock.laps
    return result


class _Stopwatch:
    """Seconds per phase of fit, for Result.timings."""

    def __init__(self) -> None:
        self.laps: Dict[str, float] = {}
        self._at = time.monotonic()

    def lap(self, name: str) -> None:
        """Adds the time since the last lap to ``name``'s."""
        now = time.monotonic()
        self.laps[name] = round(self.laps.get(name, 0.0) + now - self._at, 4)
        self._at = now


def _prepare_model(model: Any, jit: str, spec: job_pb2.JobSpec,
                   plan: plan_mod.DataPlan, block_size: Optional[int]
                   ) -> model_mod.Prepared:
    """Scripts the model and fits the task to it: loss, vocabulary."""
    module = model_mod.instantiate(model)
    if spec.task.loss == job_pb2.LOSS_KIND_UNSPECIFIED and \
            model_mod.computes_loss(module, plan.inputs):
        spec.task.loss = job_pb2.LOSS_KIND_MODEL
    with_targets = spec.task.loss == job_pb2.LOSS_KIND_MODEL
    if plan.tokens:
        plan.block_size = _block_size(block_size, module)
        spec.dataset.block_size = plan.block_size
    if isinstance(plan, images_mod.ImagePlan):
        example = lambda: plan.example(spec, with_targets)  # noqa: E731
    else:
        example = lambda: plan.example(  # noqa: E731
            with_targets, plan_mod.has_transform(spec))
    prepared = model_mod.to_torchscript(module, jit, example)
    if plan.tokens:
        vocab = model_mod.vocabulary_size(prepared.scripted, plan.block_size,
                                          with_targets)
        if vocab is not None and not spec.task.num_classes:
            spec.task.num_classes = vocab
        vocab = spec.task.num_classes or vocab
        check_token_range(plan.train, vocab, "train")
        if plan.test is not None:
            check_token_range(plan.test, vocab, "test")
    return prepared


def _block_size(block_size: Optional[int], module: nn.Module) -> int:
    value = block_size if block_size is not None else \
        getattr(module, "block_size", None)
    if value is None:
        raise InvalidSpecError("block_size is required for task="
                               "'language_model' (the model has no "
                               "block_size attribute)")
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InvalidSpecError(f"block_size must be an int >= 1, not {value!r}")
    return value


@contextlib.contextmanager
def _coordinator(local: Optional[bool], client: Any, workers: int
                 ) -> Iterator[tuple]:
    """(Client, ready) for the job: a remote coordinator, or a LocalCluster
    started now, stopped on the way out however it is left. ``ready()``
    waits for its workers, which start while the data is written."""
    remote = client is not None or (local is None and
                                    os.environ.get(COORDINATOR_ENV))
    if local is True and client is not None:
        raise InvalidSpecError("local=True starts its own cluster: do not "
                               "pass a client too")
    if local is False or (local is None and remote):
        c = client if isinstance(client, Client) else Client(client)
        try:
            _check_reachable(c, workers)
            yield c, lambda: None
        finally:
            if c is not client:
                c.close()
        return
    cluster = LocalCluster(workers)
    try:
        cluster.start(wait=False)
        with cluster.client() as c:
            yield c, cluster.wait_ready
    finally:
        cluster.stop()


def _check_reachable(client: Client, workers: int) -> None:
    """Before any data is written: the coordinator answers (else
    CoordinatorUnavailableError, within the client's timeout), and a word
    when the job will wait for workers that are not there."""
    registered = len(client.workers())
    if registered < workers:
        print(f"ringleader: {registered} worker(s) registered with "
              f"{client.address}; the job waits for {workers}", file=sys.stderr)


def _data_dir(data_dir: Any) -> pathlib.Path:
    raw = data_dir or os.environ.get(DATA_DIR_ENV)
    if not raw:
        cache = os.environ.get("XDG_CACHE_HOME") or \
            os.path.join(os.path.expanduser("~"), ".cache")
        raw = os.path.join(cache, "ringleader")
    # Absolute and normalized: the job spec's rule for every path.
    return pathlib.Path(raw).expanduser().resolve()


def _write_inputs(spec: job_pb2.JobSpec, plan: plan_mod.DataPlan,
                  prepared: model_mod.Prepared, root: pathlib.Path,
                  show: bool) -> pathlib.Path:
    """Writes (or reuses) the splits and saves the model; fills the paths.
    Image files are not written: the workers read them where they are."""
    if isinstance(plan, images_mod.ImagePlan):
        images_mod.apply(spec, plan)
        return _save_model(spec, prepared, root)
    try:
        train = store.write(plan.train, root, "train", show)
        test = None if plan.test is None else \
            store.write(plan.test, root, "test", show)
    except OSError as e:
        raise DataError(f"cannot write the data under {root}: {e}") from e
    job_dir = _save_model(spec, prepared, root)
    d = spec.dataset
    if plan.tokens:
        d.format = job_pb2.DATASET_FORMAT_TOKENS
        d.train_tokens = train.files[0]
        if test is not None:
            d.test_tokens = test.files[0]
    else:
        d.format = job_pb2.DATASET_FORMAT_NPY
        d.train.inputs[:] = train.inputs
        d.train.targets = train.targets
        if test is not None:
            d.test.inputs[:] = test.inputs
            d.test.targets = test.targets
    return job_dir


def _save_model(spec: job_pb2.JobSpec, prepared: model_mod.Prepared,
                root: pathlib.Path) -> pathlib.Path:
    """The scripted model in a job directory, and the export paths."""
    job_dir = root / "jobs" / f"{spec.name}-{secrets.token_hex(4)}"
    job_dir.mkdir(parents=True)
    spec.model.arch = job_pb2.MODEL_ARCH_TORCHSCRIPT
    spec.model.torchscript_path = str(job_dir / "model.pt")
    torch.jit.save(prepared.scripted, spec.model.torchscript_path)
    if not spec.export.torchscript_path:
        spec.export.torchscript_path = str(job_dir / "trained.pt")
    if not spec.export.safetensors_path:
        spec.export.safetensors_path = str(job_dir / "trained.safetensors")
    _make_output_dirs(spec)
    return job_dir


def _make_output_dirs(spec: job_pb2.JobSpec) -> None:
    """The directories the job writes to, which the workers expect to
    exist (as a training script's os.makedirs(out_dir) would make them)."""
    dirs = [spec.checkpoint_dir, spec.timeline_dir,
            os.path.dirname(spec.export.torchscript_path),
            os.path.dirname(spec.export.safetensors_path)]
    for d in dirs:
        if d and os.path.isabs(d):
            try:
                os.makedirs(d, exist_ok=True)
            except OSError as e:
                raise Error(f"cannot create {d} for the job: {e}") from e


def _run(client: Client, spec: job_pb2.JobSpec, show: bool) -> job_pb2.Job:
    """Submits and follows the job; Ctrl-C cancels it, says so, re-raises."""
    job_id = client.submit(spec)
    display = display_mod.Display(enabled=show)
    display.write(f"submitted job {job_id} ({spec.max_workers} workers, "
                  f"coordinator {client.address})")
    last = None
    watcher = client.watch(job_id)
    try:
        for last in watcher:
            display.update(last)
    except KeyboardInterrupt:
        # Interrupted outside the generator (drawing the bar, say), it still
        # holds its stream open: closed now, not whenever it is collected.
        watcher.close()
        display.close()
        _cancel(client, job_id)
        raise
    display.close(last)
    assert last is not None
    return last


def _cancel(client: Client, job_id: str) -> None:
    try:
        job = client.cancel(job_id)
        said = f"cancelled job {job_id} (now {state_name(job)})"
    except Error as e:
        said = f"could not cancel job {job_id}: {e}"
    print(f"ringleader: interrupted; {said}", file=sys.stderr, flush=True)


def _result(final: job_pb2.Job, prepared: model_mod.Prepared,
            root: pathlib.Path, job_dir: pathlib.Path) -> Result:
    check_succeeded(final)
    ts, st = final.spec.export.torchscript_path, final.spec.export.safetensors_path
    try:
        state = safetensors_io.load_file(st)
        eager = model_mod.trained_eager(prepared, state)
        module = eager if eager is not None else \
            torch.jit.load(ts, map_location="cpu").eval()
    except FileNotFoundError as e:
        raise Error(f"job {final.job_id} succeeded but its export is not "
                    f"readable here ({e}): data_dir ({root}) must be a "
                    "directory every worker and this machine share") from e
    return Result(model=module, state_dict=state,
                  metrics=display_mod.evaluations(final),
                  final_metrics=display_mod.final_metrics(final),
                  job_id=final.job_id, job=final, torchscript_path=ts,
                  safetensors_path=st, classes=images_mod.class_names(ts))

