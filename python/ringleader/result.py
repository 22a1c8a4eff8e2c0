"""What ``fit`` returns: the trained model and what the job measured."""
from __future__ import annotations

import dataclasses
from typing import Dict, List

import torch
from torch import nn

from .v1 import job_pb2


@dataclasses.dataclass
class Result:
    """The outcome of :func:`ringleader.fit`.

    Attributes:
        model: the trained model on the CPU, in eval mode: a copy of the
            ``nn.Module`` you passed (your class, your methods) with the
            trained ``state_dict`` loaded, or, when you passed TorchScript,
            the exported TorchScript module.
        state_dict: the trained parameters and buffers by PyTorch's
            ``state_dict`` names, read from the safetensors export.
        metrics: one dict per evaluated epoch, in order, keyed as ``ringctl
            get`` names them: ``epoch``, ``accuracy``, ``top5_accuracy``,
            ``test_loss`` (classification); ``test_loss``, ``perplexity``,
            ``bits_per_token``, ``accuracy`` (language model); ``mse``,
            ``mae`` (regression).
        final_metrics: the finished job's ``train_loss`` and test metrics.
        job_id: the job's id on the coordinator.
        job: the final ``ringleader.v1.Job`` message.
        torchscript_path: the exported TorchScript file
            (``torch.jit.load`` runs it anywhere).
        safetensors_path: the exported safetensors file.
        timings: seconds fit spent on each phase: ``prepare`` (scripting,
            checks), ``start_cluster`` (a local cluster's daemons, or
            connecting; the workers start while the data is written),
            ``write`` (the data, or only its fingerprint when reused, and the
            model), ``job`` (submit to final state), ``stop_cluster`` and
            ``load`` (the trained model back).
        classes: for an ImageFolder, the class names by id (torchvision's
            ``ImageFolder.classes``), as the job exported them beside the
            model; empty otherwise.
    """
    model: nn.Module
    state_dict: Dict[str, torch.Tensor]
    metrics: List[Dict[str, float]]
    final_metrics: Dict[str, float]
    job_id: str
    job: job_pb2.Job = dataclasses.field(repr=False)
    torchscript_path: str = ""
    safetensors_path: str = ""
    timings: Dict[str, float] = dataclasses.field(default_factory=dict)
    classes: List[str] = dataclasses.field(default_factory=list)

    def load_torchscript(self) -> torch.jit.ScriptModule:
        """The exported TorchScript model, loaded onto the CPU."""
        return torch.jit.load(self.torchscript_path, map_location="cpu")

    def __repr__(self) -> str:
        last = self.metrics[-1] if self.metrics else self.final_metrics
        shown = ", ".join(f"{k}={v:.4g}" for k, v in last.items())
        return (f"Result(job_id={self.job_id!r}, model={type(self.model).__name__}"
                f", {shown})")
