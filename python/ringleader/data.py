"""What ``fit`` accepts as data, brought to the fields the workers read.

A split is a list of fields (the model's inputs, in ``forward``'s order,
then the targets), each one NumPy array per sample of a fixed shape and
dtype, as ``DataLoader``'s default collation makes a batch of them. The
workers read ``.npy`` files of uint8, int32, int64, float16 and float32
(``worker/data/npy_dataset.h``), so other dtypes are widened here the way
torch would hold them: float64 and bfloat16 to float32 (torch's default
float), bool, int8 and int16 to int32... A Python int is an int64, a float
a float32.

Sources:
  * arrays: a NumPy array or torch tensor per field (a tuple of them, a
    ``TensorDataset``), read in chunks (a ``np.memmap`` larger than memory
    works);
  * items: any map-style ``Dataset`` (``__len__`` and ``__getitem__``),
    each item a tuple of tensors, arrays or numbers; read once, in order.
  * tokens (``task="language_model"``): one 1-D array of token ids.
"""
from __future__ import annotations

import dataclasses
import numbers
from typing import Any, Iterator, List, Optional, Sequence, Tuple

import numpy as np

from .errors import DataError

# dtype the workers read -> itself; others -> what they become.
_WIDEN = {
    np.dtype(np.float64): np.dtype(np.float32),
    np.dtype(np.bool_): np.dtype(np.uint8),
    np.dtype(np.int8): np.dtype(np.int32),
    np.dtype(np.int16): np.dtype(np.int32),
    np.dtype(np.uint16): np.dtype(np.int32),
    np.dtype(np.uint32): np.dtype(np.int64),
    np.dtype(np.uint64): np.dtype(np.int64),
}
_READABLE = {np.dtype(t) for t in (np.uint8, np.int32, np.int64, np.float16,
                                   np.float32)}
# Token files: what worker/data/token_dataset.h reads from a 1-D .npy.
_TOKEN_DTYPES = {np.dtype(t) for t in (np.uint16, np.int32, np.uint32,
                                       np.int64)}
_TOKEN_WIDEN = {np.dtype(np.uint8): np.dtype(np.uint16),
                np.dtype(np.int8): np.dtype(np.int32),
                np.dtype(np.int16): np.dtype(np.int32),
                np.dtype(np.uint64): np.dtype(np.int64)}


@dataclasses.dataclass(frozen=True)
class FieldSpec:
    """One field of every sample: dtype as written, and one sample's shape."""
    dtype: np.dtype
    shape: Tuple[int, ...]

    def describe(self) -> str:
        return f"{self.dtype.name} {list(self.shape)}"


def _is_tensor(x: Any) -> bool:
    return type(x).__module__.startswith("torch") and hasattr(x, "numpy")


def to_numpy(x: Any) -> np.ndarray:
    """A tensor or array as a NumPy array (a tensor's bfloat16 as float32)."""
    if _is_tensor(x):
        t = x.detach()
        if t.device.type != "cpu":
            t = t.cpu()
        if str(t.dtype) == "torch.bfloat16":
            t = t.float()
        return t.numpy()
    return np.asarray(x)


def worker_dtype(dtype: np.dtype, where: str) -> np.dtype:
    """The dtype a field of ``dtype`` is written as; DataError if none."""
    dtype = np.dtype(dtype)
    if dtype in _READABLE:
        return dtype.newbyteorder("<") if dtype.byteorder == ">" else dtype
    if dtype.newbyteorder("=") in _READABLE:
        return dtype.newbyteorder("<")
    if dtype in _WIDEN:
        return _WIDEN[dtype]
    raise DataError(f"{where}: dtype {dtype} cannot be trained on (numbers "
                    "only: bool, integers, float16/32/64)")


def check_targets(field: FieldSpec, task: str, where: str) -> None:
    """Classification targets are class ids; regression ones are floats."""
    is_int = np.issubdtype(field.dtype, np.integer)
    if task == "classification" and not is_int:
        raise DataError(f"{where}: classification targets must be integer "
                        f"class ids, got {field.dtype.name} (for float "
                        "targets use task='regression')")
    if task == "regression" and is_int:
        raise DataError(f"{where}: regression targets must be floats, got "
                        f"{field.dtype.name}")


def item_fields(item: Any, index: int, split: str) -> List[np.ndarray]:
    """An item's fields as arrays, checked for kind (not yet for shape)."""
    if isinstance(item, (tuple, list)):
        parts = list(item)
    else:
        raise DataError(
            f"{split} item {index} is a {type(item).__name__}; fit needs "
            "items (input, ..., target) as a DataLoader collates them")
    if len(parts) < 2:
        raise DataError(f"{split} item {index} has {len(parts)} field(s); "
                        "fit needs at least an input and a target")
    out = []
    for k, p in enumerate(parts):
        if isinstance(p, bool) or isinstance(p, np.bool_):
            out.append(np.asarray(p, dtype=np.uint8))
        elif isinstance(p, numbers.Integral):
            out.append(np.asarray(p, dtype=np.int64))
        elif isinstance(p, numbers.Real):
            out.append(np.asarray(p, dtype=np.float32))
        elif _is_tensor(p) or isinstance(p, np.ndarray):
            out.append(to_numpy(p))
        else:
            raise DataError(
                f"{split} item {index}: field {k} is a {type(p).__name__}; "
                "fields are tensors, arrays or numbers")
    return out


@dataclasses.dataclass
class ArraySource:
    """A split given as one array per field (inputs..., targets)."""
    arrays: List[Any]  # np.ndarray or torch.Tensor, same first dimension
    fields: List[FieldSpec]

    def __len__(self) -> int:
        return int(self.arrays[0].shape[0])

    def chunks(self, field: int, rows: int, start: int = 0
               ) -> Iterator[np.ndarray]:
        """Field ``field`` from sample ``start`` on, in slices of ``rows``
        samples, as written."""
        a, spec = self.arrays[field], self.fields[field]
        for first in range(start, len(self), rows):
            part = to_numpy(a[first:first + rows])
            yield np.ascontiguousarray(part, dtype=spec.dtype)


@dataclasses.dataclass
class ItemSource:
    """A split given as a map-style Dataset, read item by item."""
    dataset: Any
    fields: List[FieldSpec]
    split: str
    item_dtypes: List[np.dtype]  # Item 0's, before widening: every item's

    def __len__(self) -> int:
        return len(self.dataset)

    def fill(self, start: int, buffers: Sequence[np.ndarray]) -> int:
        """Reads items ``start``... into ``buffers`` (one per field, as many
        rows as they have); returns how many were read."""
        n = min(len(buffers[0]), len(self) - start)
        for j in range(n):
            i = start + j
            parts = item_fields(self.dataset[i], i, self.split)
            check_item(parts, self.fields, self.item_dtypes, i, self.split)
            for k, part in enumerate(parts):
                buffers[k][j] = part
        return n


def check_item(parts: List[np.ndarray], fields: List[FieldSpec],
               dtypes: List[np.dtype], index: int, split: str) -> None:
    """Item ``index`` has item 0's structure: its fields, shapes, dtypes
    (as ``DataLoader`` would stack them)."""
    if len(parts) != len(fields):
        raise DataError(f"{split} item {index} has {len(parts)} fields; item 0 "
                        f"has {len(fields)}")
    for k, (part, spec, dtype) in enumerate(zip(parts, fields, dtypes)):
        if tuple(part.shape) != spec.shape or part.dtype != dtype:
            role = "target" if k == len(fields) - 1 else f"input {k}"
            raise DataError(
                f"{split} item {index}: field {k} ({role}) is "
                f"{part.dtype.name} {list(part.shape)}, but item 0's is "
                f"{dtype.name} {list(spec.shape)}: every item needs one shape "
                "and dtype per field (pad or crop it, or cast it)")


def _array_source(arrays: Sequence[Any], split: str) -> ArraySource:
    if len(arrays) < 2:
        raise DataError(f"{split}: fit needs the inputs and the targets, e.g. "
                        "(x, y); got one array")
    n = None
    fields = []
    for k, a in enumerate(arrays):
        if not (_is_tensor(a) or isinstance(a, np.ndarray)):
            raise DataError(f"{split}: field {k} is a {type(a).__name__}, not "
                            "an array or tensor")
        if a.ndim < 1:
            raise DataError(f"{split}: field {k} is a scalar; the first "
                            "dimension counts the samples")
        if n is not None and a.shape[0] != n:
            raise DataError(f"{split}: field {k} has {a.shape[0]} samples, "
                            f"field 0 has {n}")
        n = a.shape[0]
        dtype = to_numpy(a[:0]).dtype
        fields.append(FieldSpec(worker_dtype(dtype, f"{split} field {k}"),
                                tuple(int(d) for d in a.shape[1:])))
    if not n:
        raise DataError(f"{split}: no samples")
    return ArraySource(list(arrays), fields)


def _item_source(dataset: Any, split: str) -> ItemSource:
    try:
        n = len(dataset)
    except TypeError:
        raise DataError(f"{split}: a {type(dataset).__name__} has no len(); "
                        "fit needs a map-style Dataset (IterableDataset is "
                        "not supported)") from None
    if n == 0:
        raise DataError(f"{split}: the dataset is empty")
    parts = item_fields(dataset[0], 0, split)
    fields = [FieldSpec(worker_dtype(p.dtype, f"{split} item 0 field {k}"),
                        tuple(p.shape)) for k, p in enumerate(parts)]
    return ItemSource(dataset, fields, split, [p.dtype for p in parts])


def source(data: Any, split: str, task: str):
    """The source for ``data`` (see the module's doc), checked."""
    if isinstance(data, (tuple, list)):
        src: Any = _array_source(data, split)
    elif _is_tensor(data) or isinstance(data, np.ndarray):
        src = _array_source([data], split)
    elif type(data).__name__ == "TensorDataset" and hasattr(data, "tensors"):
        src = _array_source(list(data.tensors), split)
    elif hasattr(data, "__getitem__"):
        src = _item_source(data, split)
    else:
        raise DataError(f"{split}: a {type(data).__name__} is not a dataset: "
                        "pass a map-style Dataset, a TensorDataset, or NumPy "
                        "arrays (x, y)")
    check_targets(src.fields[-1], task, f"{split} targets")
    return src


def tokens(data: Any, split: str) -> np.ndarray:
    """A 1-D array of token ids as written (uint16, int32, uint32, int64)."""
    if isinstance(data, (list, tuple)):
        data = np.asarray(data)
    if not (_is_tensor(data) or isinstance(data, np.ndarray)):
        raise DataError(f"{split}: a language model trains on a 1-D array of "
                        f"token ids, not a {type(data).__name__}")
    a = to_numpy(data)
    if a.ndim != 1:
        raise DataError(f"{split}: token ids must be 1-D (one stream), got "
                        f"shape {list(a.shape)}")
    if not np.issubdtype(a.dtype, np.integer):
        raise DataError(f"{split}: token ids must be integers, got "
                        f"{a.dtype.name}")
    dtype = np.dtype(a.dtype).newbyteorder("=")
    if dtype in _TOKEN_DTYPES:
        return a
    if dtype in _TOKEN_WIDEN:
        return a  # Widened chunk by chunk as it is written.
    raise DataError(f"{split}: token dtype {a.dtype} is not supported")


def token_dtype(a: np.ndarray) -> np.dtype:
    dtype = np.dtype(a.dtype).newbyteorder("=")
    return np.dtype(_TOKEN_WIDEN.get(dtype, dtype)).newbyteorder("<")


def check_token_range(a: np.ndarray, vocab: Optional[int], split: str,
                      rows: int = 1 << 24) -> None:
    """Every id in [0, vocab): else the first bad id, its position, vocab."""
    for start in range(0, len(a), rows):
        chunk = np.asarray(a[start:start + rows])
        bad = chunk < 0
        if vocab is not None:
            bad |= chunk >= vocab
        if bad.any():
            pos = int(np.argmax(bad))
            value = int(chunk[pos])
            if value < 0:
                raise DataError(f"{split}: token id {value} at position "
                                f"{start + pos} is negative")
            raise DataError(
                f"{split}: token id {value} at position {start + pos} is >= "
                f"the model's vocabulary size {vocab}")
