"""Reading a ``.safetensors`` file into a ``state_dict``.

The workers export one (``worker/export/safetensors_writer``). The
``safetensors`` package is used when it is installed; Debian does not
package it, so otherwise this reads the format itself, which is small and
fixed: an 8-byte little-endian header length, a JSON header mapping each
tensor's name to its dtype, shape and byte range, then the bytes.
"""
from __future__ import annotations

import json
import struct
from typing import Dict

import numpy as np
import torch

# safetensors dtype -> (numpy dtype to read the bytes as, torch view or None)
_DTYPES = {
    "F64": (np.float64, None), "F32": (np.float32, None),
    "F16": (np.float16, None), "BF16": (np.int16, torch.bfloat16),
    "I64": (np.int64, None), "I32": (np.int32, None), "I16": (np.int16, None),
    "I8": (np.int8, None), "U8": (np.uint8, None), "BOOL": (np.bool_, None),
}
MAX_HEADER_BYTES = 100 << 20  # The format's own limit.


def load_file(path: str) -> Dict[str, torch.Tensor]:
    """The tensors of a safetensors file, by name, on the CPU."""
    try:
        from safetensors.torch import load_file as st_load  # type: ignore
        return st_load(path)
    except ImportError:
        pass
    with open(path, "rb") as f:
        raw = f.read()
    if len(raw) < 8:
        raise ValueError(f"{path}: not a safetensors file (too short)")
    (n,) = struct.unpack("<Q", raw[:8])
    if n > min(MAX_HEADER_BYTES, len(raw) - 8):
        raise ValueError(f"{path}: header of {n} bytes does not fit the file")
    header = json.loads(raw[8:8 + n])
    body = memoryview(raw)[8 + n:]
    out: Dict[str, torch.Tensor] = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        np_dtype, view = _DTYPES[info["dtype"]]
        begin, end = info["data_offsets"]
        array = np.frombuffer(body[begin:end], dtype=np.dtype(np_dtype).newbyteorder("<"))
        t = torch.from_numpy(array.astype(np_dtype, copy=True)).reshape(info["shape"])
        out[name] = t.view(view) if view is not None else t
    return out
