"""Writing a split once under ``data_dir``, named by its content.

Each split becomes a directory ``npy-<fingerprint>`` (``x0.npy``... one per
input, ``y.npy``) or ``tokens-<fingerprint>`` (``tokens.npy``), where the
fingerprint is a hash of the fields' dtypes, shapes and bytes as written:
XXH3-128 (Debian's python3-xxhash; ~15 GB/s, so fingerprinting costs a
fraction of writing even when the page cache takes the write at memory
speed), else SHA-256. XXH3 is not cryptographic: it tells any accidental
change apart, which is what reuse needs in the user's own ``data_dir``. A second ``fit`` with the same data finds the directory and
writes nothing. Files go to a private temporary directory first and are
renamed into place whole, so a reader (a worker, a concurrent ``fit``)
never sees half a dataset; if another call won the race, its copy is kept.

Arrays are hashed, then written, in chunks of about ``CHUNK_BYTES`` (so a
``np.memmap`` larger than memory streams through); a Dataset is read once,
item by item into chunk buffers that are hashed and written as they fill.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import pathlib
import shutil
import tempfile
from typing import Any, Iterable, List, Sequence

import numpy as np

from . import data as data_mod
from .data import ArraySource, FieldSpec, ItemSource
from .errors import DataError

FORMAT = 1  # Bump when the layout changes: old directories are not reused.
CHUNK_BYTES = 32 << 20
MANIFEST = "manifest.json"


@dataclasses.dataclass
class Written:
    """A split on disk: its files as the job spec names them."""
    directory: pathlib.Path
    files: List[str]  # Inputs then targets, or the one token file.
    samples: int
    fields: List[FieldSpec]
    fingerprint: str
    reused: bool

    @property
    def inputs(self) -> List[str]:
        return self.files[:-1]

    @property
    def targets(self) -> str:
        return self.files[-1]


def _progress(total: int, desc: str, enabled: bool, unit: str = "B"):
    from tqdm.auto import tqdm
    # delay: a bar only for writes that take a while (small data is silent).
    return tqdm(total=total, desc=desc, unit=unit, unit_scale=True,
                delay=1.0, disable=not enabled, leave=False)


try:
    import xxhash

    def _new_hash():
        return xxhash.xxh3_128()
    HASH = "xxh3_128"
except ImportError:  # python3-xxhash is not installed: slower, as good.
    def _new_hash():
        return hashlib.sha256()
    HASH = "sha256"


def _field_hasher(spec: FieldSpec, samples: int):
    h = _new_hash()
    h.update(f"{spec.dtype.str}|{list(spec.shape)}|{samples}\n".encode())
    return h


def _combine(kind: str, digests: Iterable[str]) -> str:
    h = hashlib.sha256(f"ringleader-data {FORMAT} {HASH} {kind}\n".encode())
    for d in digests:
        h.update(d.encode())
    return h.hexdigest()[:32]


def _rows_per_chunk(fields: Sequence[FieldSpec]) -> int:
    widest = max(f.dtype.itemsize * int(np.prod(f.shape, dtype=np.int64))
                 for f in fields)
    return max(1, CHUNK_BYTES // max(1, widest))


def _open_npy(path: pathlib.Path, spec: FieldSpec, samples: int):
    f = open(path, "wb")
    np.lib.format.write_array_header_1_0(f, {
        "descr": np.lib.format.dtype_to_descr(spec.dtype),
        "fortran_order": False,
        "shape": (samples,) + tuple(spec.shape),
    })
    return f


def _existing(final: pathlib.Path, fingerprint: str) -> bool:
    try:
        manifest = json.loads((final / MANIFEST).read_text())
    except (OSError, ValueError):
        return False
    if manifest.get("fingerprint") != fingerprint:
        return False
    os.utime(final)  # Last used: what a clean-up by age would go by.
    return True


def _publish(tmp: pathlib.Path, final: pathlib.Path, manifest: dict) -> bool:
    """Renames ``tmp`` to ``final``; False when another writer got there
    first (``tmp`` is then removed and theirs is used)."""
    (tmp / MANIFEST).write_text(json.dumps(manifest, indent=1))
    try:
        os.rename(tmp, final)
        return True
    except OSError:
        if not (final / MANIFEST).exists():
            raise
        shutil.rmtree(tmp, ignore_errors=True)
        return False


def _manifest(kind: str, fingerprint: str, samples: int, names: List[str],
              fields: Sequence[FieldSpec]) -> dict:
    return {"format": FORMAT, "kind": kind, "fingerprint": fingerprint,
            "samples": samples,
            "fields": [{"file": n, "dtype": f.dtype.str, "shape": list(f.shape)}
                       for n, f in zip(names, fields)]}


def _names(fields: Sequence[FieldSpec]) -> List[str]:
    return [f"x{k}.npy" for k in range(len(fields) - 1)] + ["y.npy"]


def _make_tmp(data_dir: pathlib.Path) -> pathlib.Path:
    data_dir.mkdir(parents=True, exist_ok=True)
    return pathlib.Path(tempfile.mkdtemp(prefix=".tmp-", dir=data_dir))


def _result(final, names, samples, fields, fp, reused) -> Written:
    return Written(final, [str(final / n) for n in names], samples,
                   list(fields), fp, reused)


def write_arrays(src: ArraySource, data_dir: pathlib.Path, split: str,
                 progress: bool) -> Written:
    """Hashes the arrays; writes them unless that content is there."""
    n, rows = len(src), _rows_per_chunk(src.fields)
    total = sum(f.dtype.itemsize * int(np.prod(f.shape, dtype=np.int64)) * n
                for f in src.fields)
    digests = []
    with _progress(total, f"hashing {split}", progress) as bar:
        for k, spec in enumerate(src.fields):
            h = _field_hasher(spec, n)
            for chunk in src.chunks(k, rows):
                h.update(memoryview(chunk).cast("B"))
                bar.update(chunk.nbytes)
            digests.append(h.hexdigest())
    fp = _combine("npy", digests)
    final, names = data_dir / f"npy-{fp}", _names(src.fields)
    if _existing(final, fp):
        return _result(final, names, n, src.fields, fp, True)
    tmp = _make_tmp(data_dir)
    try:
        with _progress(total, f"writing {split}", progress) as bar:
            for k, spec in enumerate(src.fields):
                with _open_npy(tmp / names[k], spec, n) as f:
                    for chunk in src.chunks(k, rows):
                        f.write(memoryview(chunk).cast("B"))
                        bar.update(chunk.nbytes)
        won = _publish(tmp, final, _manifest("npy", fp, n, names, src.fields))
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return _result(final, names, n, src.fields, fp, not won)


def write_items(src: ItemSource, data_dir: pathlib.Path, split: str,
                progress: bool) -> Written:
    """Reads every item once into chunk buffers, hashing and writing them."""
    n, rows = len(src), _rows_per_chunk(src.fields)
    names = _names(src.fields)
    tmp = _make_tmp(data_dir)
    try:
        hashers = [_field_hasher(f, n) for f in src.fields]
        buffers = [np.empty((min(rows, n),) + f.shape, f.dtype)
                   for f in src.fields]
        files = [_open_npy(tmp / name, f, n)
                 for name, f in zip(names, src.fields)]
        try:
            with _progress(n, f"writing {split}", progress, "item") as bar:
                start = 0
                while start < n:
                    got = src.fill(start, buffers)
                    for h, f, b in zip(hashers, files, buffers):
                        view = memoryview(np.ascontiguousarray(b[:got])).cast("B")
                        h.update(view)
                        f.write(view)
                    start += got
                    bar.update(got)
        finally:
            for f in files:
                f.close()
        fp = _combine("npy", [h.hexdigest() for h in hashers])
        final = data_dir / f"npy-{fp}"
        if _existing(final, fp):
            shutil.rmtree(tmp, ignore_errors=True)
            return _result(final, names, n, src.fields, fp, True)
        won = _publish(tmp, final, _manifest("npy", fp, n, names, src.fields))
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return _result(final, names, n, src.fields, fp, not won)


def write_tokens(tokens: np.ndarray, data_dir: pathlib.Path, split: str,
                 progress: bool) -> Written:
    """A 1-D token stream as ``tokens.npy``, reused by fingerprint."""
    dtype = data_mod.token_dtype(tokens)
    spec = FieldSpec(dtype, ())
    n, rows = len(tokens), CHUNK_BYTES // dtype.itemsize
    if n < 2:
        raise DataError(f"{split}: {n} token(s) make no window")

    def chunks():
        for start in range(0, n, rows):
            yield np.ascontiguousarray(tokens[start:start + rows], dtype=dtype)

    h = _field_hasher(spec, n)
    for chunk in chunks():
        h.update(memoryview(chunk).cast("B"))
    fp = _combine("tokens", [h.hexdigest()])
    final, names = data_dir / f"tokens-{fp}", ["tokens.npy"]
    if _existing(final, fp):
        return _result(final, names, n, [spec], fp, True)
    tmp = _make_tmp(data_dir)
    try:
        with _progress(n * dtype.itemsize, f"writing {split}", progress) as bar, \
                _open_npy(tmp / names[0], spec, n) as f:
            for chunk in chunks():
                f.write(memoryview(chunk).cast("B"))
                bar.update(chunk.nbytes)
        won = _publish(tmp, final, _manifest("tokens", fp, n, names, [spec]))
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return _result(final, names, n, [spec], fp, not won)


def write(source: Any, data_dir: pathlib.Path, split: str,
          progress: bool) -> Written:
    """Writes (or finds) ``source``: an ArraySource, ItemSource or tokens."""
    if isinstance(source, ArraySource):
        return write_arrays(source, data_dir, split, progress)
    if isinstance(source, ItemSource):
        return write_items(source, data_dir, split, progress)
    return write_tokens(source, data_dir, split, progress)
