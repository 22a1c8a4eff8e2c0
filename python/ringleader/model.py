"""The user's model made TorchScript, the form every worker loads.

``torch.jit.script`` compiles ``forward`` and what it calls from source, so
the exported model keeps its control flow. When torch refuses a construct,
the error names it (with torch's own pointer into the source) and offers
``jit="trace"``: ``torch.jit.trace`` records the model on a batch of the
training data instead, fine for models whose path does not depend on the
data.
"""
from __future__ import annotations

import copy
import dataclasses
import inspect
import re
from typing import Any, Callable, List, Optional, Sequence, Union

import numpy as np
import torch
from torch import nn

from .errors import ModelScriptError

ModelLike = Union[nn.Module, Callable[[], nn.Module]]
# forward's argument after the inputs, by these names, takes the targets:
# the model computes its own loss (nanoGPT's forward(idx, targets)).
TARGET_NAMES = {"targets", "target", "labels", "label", "y"}


@dataclasses.dataclass
class Prepared:
    """The model as the job runs it, and the eager module it came from."""
    scripted: torch.jit.ScriptModule
    eager: Optional[nn.Module]  # None when the user gave TorchScript
    name: str  # The module's class name, for the job's name


def instantiate(model: ModelLike) -> nn.Module:
    """``model`` itself, or what the ``model_fn`` returns."""
    if isinstance(model, nn.Module):
        return model
    if callable(model):
        built = model()
        if not isinstance(built, nn.Module):
            raise ModelScriptError(
                f"the model_fn {getattr(model, '__name__', model)!r} returned "
                f"a {type(built).__name__}, not a torch.nn.Module")
        return built
    raise ModelScriptError(f"model must be a torch.nn.Module or a function "
                           f"returning one, not a {type(model).__name__}")


def _where(module: nn.Module) -> str:
    """`` at file:line`` of the module's forward, for an error without one."""
    try:
        forward = type(module).forward
        _, line = inspect.getsourcelines(forward)
        return f" at {inspect.getsourcefile(forward)}:{line}"
    except (OSError, TypeError):
        return " (its source is not available)"


def _script_error(module: nn.Module, err: Exception) -> ModelScriptError:
    text = str(err).strip()
    if "<--- HERE" not in text:  # Not a compile error with a pointer.
        text += (f"\n(while compiling {type(module).__name__}.forward"
                 f"{_where(module)} or what it calls; {type(err).__name__})")
    body = "\n".join("    " + line for line in text.splitlines())
    return ModelScriptError(
        f"torch.jit.script cannot compile {type(module).__name__}, and the "
        f"workers run TorchScript. torch refused this construct:\n{body}\n"
        "Ways out: write that part in TorchScript's subset of Python "
        "(https://pytorch.org/docs/stable/jit_language_reference.html), or "
        "pass jit=\"trace\" to fit: torch.jit.trace then records the model "
        "on a batch of the training data (control flow that depends on the "
        "data follows that batch's path).")


def to_torchscript(module: nn.Module, jit: str,
                   example: Callable[[], Sequence[torch.Tensor]]) -> Prepared:
    """Scripts (or traces, with ``example()`` as the arguments) the model."""
    if isinstance(module, torch.jit.ScriptModule):
        return Prepared(module, None, module.original_name)
    if jit == "script":
        try:
            scripted = torch.jit.script(module)
        except Exception as err:  # torch raises several unrelated types
            raise _script_error(module, err) from None
    elif jit == "trace":
        was_training = module.training
        try:
            scripted = torch.jit.trace(module, tuple(example()),
                                       check_trace=False)
        except Exception as err:
            raise ModelScriptError(
                f"torch.jit.trace of {type(module).__name__} failed on a "
                f"batch of the training data: {err}") from None
        finally:
            module.train(was_training)
    else:
        raise ModelScriptError(f"jit must be 'script' or 'trace', not {jit!r}")
    return Prepared(scripted, module, type(module).__name__)


def forward_arguments(module: nn.Module) -> List[str]:
    """Names of forward's arguments, ``self`` left out."""
    if isinstance(module, torch.jit.ScriptModule):
        return [a.name for a in module.forward.schema.arguments][1:]
    params = inspect.signature(module.forward).parameters.values()
    return [p.name for p in params
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]


def computes_loss(module: nn.Module, inputs: int) -> bool:
    """Whether forward takes the targets after its ``inputs`` inputs."""
    args = forward_arguments(module)
    return len(args) > inputs and args[inputs].lower() in TARGET_NAMES


def _logits(out: Any) -> Optional[torch.Tensor]:
    if isinstance(out, torch.Tensor):
        return out
    if isinstance(out, (tuple, list)) and out and isinstance(out[0], torch.Tensor):
        return out[0]
    if isinstance(out, dict) and isinstance(out.get("logits"), torch.Tensor):
        return out["logits"]
    return None


def vocabulary_size(scripted: torch.jit.ScriptModule, block_size: int,
                    with_targets: bool) -> Optional[int]:
    """The vocabulary a language model predicts over: its logits' last
    dimension on a batch of token 0 (a valid id in every vocabulary).
    None when forward returns no logits (only a loss)."""
    idx = torch.zeros(2, block_size, dtype=torch.long)
    args = (idx, idx) if with_targets else (idx,)
    was_training = scripted.training
    scripted.eval()
    try:
        with torch.no_grad():
            out = scripted(*args)
    except Exception as err:
        raise ModelScriptError(
            "the model does not run on a batch of token windows (int64 "
            f"[2, {block_size}]{' and the targets' if with_targets else ''}): "
            f"{_first_lines(str(err))}") from None
    finally:
        scripted.train(was_training)
    logits = _logits(out)
    if logits is None or logits.dim() < 3:
        return None
    return int(logits.shape[-1])


def _first_lines(text: str, n: int = 12) -> str:
    lines = text.strip().splitlines()
    return "\n".join(lines[:n]) + ("\n..." if len(lines) > n else "")


def job_name(prepared: Prepared) -> str:
    """``fit-<class>`` as a job name may spell it: [a-z0-9-], at most 40."""
    slug = re.sub(r"[^a-z0-9]+", "-", prepared.name.lower()).strip("-")
    return f"fit-{slug[:40].strip('-') or 'model'}"


def trained_eager(prepared: Prepared, state: dict) -> Optional[nn.Module]:
    """A copy of the user's eager module holding ``state``, in eval mode."""
    if prepared.eager is None:
        return None
    module = copy.deepcopy(prepared.eager).cpu()
    module.load_state_dict(state, strict=True)
    return module.eval()


def example_inputs(arrays: Sequence[np.ndarray],
                   as_float: bool = False) -> List[torch.Tensor]:
    """Sample arrays as the workers feed them: integers as int64, floats as
    float32 (``worker/data/npy_dataset.h``); with a transform, inputs as
    float32. The last array is the targets, left as they are typed."""
    out = []
    for k, a in enumerate(arrays):
        t = torch.from_numpy(np.ascontiguousarray(a))
        is_input = k < len(arrays) - 1
        out.append(t.float() if t.is_floating_point() or (as_float and is_input)
                   else t.long())
    return out
