"""Writing a split once under ``data_dir``, named by its content.

Each split becomes a directory ``npy-<fingerprint>`` (``x0.npy``... one per
input, ``y.npy``) or ``tokens-<fingerprint>`` (``tokens.npy``), where the
fingerprint is a hash of the fields' dtypes, shapes and bytes as written:
XXH3-128 (Debian's python3-xxhash; ~15 GB/s), else SHA-256. XXH3 is not
cryptographic: it tells any accidental change apart, which is what reuse
needs in the user's own ``data_dir``. Files go to a private temporary
directory first and are renamed into place whole, so a reader (a worker, a
concurrent ``fit``) never sees half a dataset; if another call won the race,
its copy is kept.

Arrays cost about what ``np.save`` of them costs, new or not:
  * new data is hashed while it is written, chunk by chunk on a second
    thread (both release the GIL), so the hash hides behind the write;
  * data seen before is found by a sketch (the dtypes, shapes and 16 sampled
    rows of each field, kept in ``data_dir/.sketches``) and then confirmed by
    hashing it whole, which reads it once and writes nothing.
A sketch is only a hint: a split whose full hash differs is written anew.
Chunks are about ``CHUNK_BYTES``, so a ``np.memmap`` larger than memory
streams through. A Dataset is read once, item by item into chunk buffers
that are hashed and written as they fill.
"""
from __future__ import annotations

import concurrent.futures
import dataclasses
import hashlib
import json
import os
import pathlib
import shutil
import tempfile
from typing import Any, Callable, Iterable, Iterator, List, Optional, Sequence

import numpy as np

from . import data as data_mod
from .data import ArraySource, FieldSpec, ItemSource
from .errors import DataError

FORMAT = 1  # Bump when the layout changes: old directories are not reused.
CHUNK_BYTES = 32 << 20
SKETCH_ROWS = 16
MANIFEST = "manifest.json"
SKETCHES = ".sketches"

try:
    import xxhash

    def _new_hash():
        return xxhash.xxh3_128()
    HASH = "xxh3_128"
except ImportError:  # python3-xxhash is not installed: slower, as good.
    def _new_hash():
        return hashlib.sha256()
    HASH = "sha256"


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


@dataclasses.dataclass
class _Split:
    """What is written: fields, how to read each in chunks, the file names."""
    kind: str  # "npy" or "tokens"
    fields: List[FieldSpec]
    samples: int
    names: List[str]
    # field -> its chunks; (field, index) -> one sample. None for a Dataset,
    # which is read item by item instead.
    chunks: Optional[Callable[[int], Iterator[np.ndarray]]] = None
    row: Optional[Callable[[int, int], np.ndarray]] = None


def _progress(total: int, desc: str, enabled: bool, unit: str = "B"):
    from tqdm.auto import tqdm
    # delay: a bar only for writes that take a while (small data is silent).
    return tqdm(total=total, desc=desc, unit=unit, unit_scale=True,
                delay=1.0, disable=not enabled, leave=False)


def _field_hasher(spec: FieldSpec, samples: int):
    h = _new_hash()
    h.update(f"{spec.dtype.str}|{list(spec.shape)}|{samples}\n".encode())
    return h


def _combine(kind: str, digests: Iterable[str]) -> str:
    h = hashlib.sha256(f"ringleader-data {FORMAT} {HASH} {kind}\n".encode())
    for d in digests:
        h.update(d.encode())
    return h.hexdigest()[:32]


def _bytes(fields: Sequence[FieldSpec], samples: int) -> int:
    return sum(f.dtype.itemsize * int(np.prod(f.shape, dtype=np.int64))
               for f in fields) * samples


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


def _view(chunk: np.ndarray) -> memoryview:
    return memoryview(np.ascontiguousarray(chunk)).cast("B")


def _sketch(split: _Split) -> str:
    """A cheap key for "seen before?": dtypes, shapes, sampled rows."""
    h = _new_hash()
    h.update(f"{split.kind}|{split.samples}\n".encode())
    picks = sorted({int(i) for i in np.linspace(0, split.samples - 1,
                                                SKETCH_ROWS)})
    for k, spec in enumerate(split.fields):
        h.update(f"{spec.dtype.str}|{list(spec.shape)}\n".encode())
        for i in picks:
            h.update(_view(split.row(k, i)))
    return h.hexdigest()


def _sketch_path(data_dir: pathlib.Path, split: _Split, sketch: str):
    return data_dir / SKETCHES / f"{split.kind}-{sketch}"


def _existing(final: pathlib.Path, fingerprint: str) -> bool:
    try:
        manifest = json.loads((final / MANIFEST).read_text())
    except (OSError, ValueError):
        return False
    if manifest.get("fingerprint") != fingerprint:
        return False
    os.utime(final)  # Last used: what a clean-up by age would go by.
    return True


def _candidate(data_dir: pathlib.Path, split: _Split, sketch: str
               ) -> Optional[str]:
    """The fingerprint a split of this sketch had, if its files are there."""
    try:
        fp = _sketch_path(data_dir, split, sketch).read_text().strip()
    except OSError:
        return None
    manifest = data_dir / f"{split.kind}-{fp}" / MANIFEST
    return fp if manifest.exists() else None


def _remember(data_dir: pathlib.Path, split: _Split, sketch: str,
              fp: str) -> None:
    path = _sketch_path(data_dir, split, sketch)
    path.parent.mkdir(exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}")
    tmp.write_text(fp + "\n")
    os.replace(tmp, path)


def _hash(split: _Split, bar) -> str:
    digests = []
    for k, spec in enumerate(split.fields):
        h = _field_hasher(spec, split.samples)
        for chunk in split.chunks(k):
            view = _view(chunk)
            h.update(view)
            bar.update(view.nbytes)
        digests.append(h.hexdigest())
    return _combine(split.kind, digests)


def _write_hashing(split: _Split, tmp: pathlib.Path, bar) -> str:
    """Writes every field into ``tmp`` while a second thread hashes each
    chunk just written to the file (in order; one chunk in flight)."""
    digests = []
    with concurrent.futures.ThreadPoolExecutor(1) as hasher:
        for k, spec in enumerate(split.fields):
            h = _field_hasher(spec, split.samples)
            pending = None
            with _open_npy(tmp / split.names[k], spec, split.samples) as f:
                for chunk in split.chunks(k):
                    view = _view(chunk)
                    if pending is not None:
                        pending.result()
                    pending = hasher.submit(h.update, view)
                    f.write(view)
                    bar.update(view.nbytes)
            if pending is not None:
                pending.result()
            digests.append(h.hexdigest())
    return _combine(split.kind, digests)


def _manifest(split: _Split, fingerprint: str) -> dict:
    return {"format": FORMAT, "kind": split.kind, "hash": HASH,
            "fingerprint": fingerprint, "samples": split.samples,
            "fields": [{"file": n, "dtype": f.dtype.str, "shape": list(f.shape)}
                       for n, f in zip(split.names, split.fields)]}


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


def _result(data_dir, split: _Split, fp: str, reused: bool) -> Written:
    final = data_dir / f"{split.kind}-{fp}"
    return Written(final, [str(final / n) for n in split.names],
                   split.samples, list(split.fields), fp, reused)


def _write_split(split: _Split, data_dir: pathlib.Path, desc: str,
                 progress: bool) -> Written:
    data_dir.mkdir(parents=True, exist_ok=True)
    total = _bytes(split.fields, split.samples)
    sketch = _sketch(split)
    known = _candidate(data_dir, split, sketch)
    if known is not None:
        with _progress(total, f"checking {desc}", progress) as bar:
            fp = _hash(split, bar)
        if _existing(data_dir / f"{split.kind}-{fp}", fp):
            return _result(data_dir, split, fp, True)
    tmp = pathlib.Path(tempfile.mkdtemp(prefix=".tmp-", dir=data_dir))
    try:
        with _progress(total, f"writing {desc}", progress) as bar:
            fp = _write_hashing(split, tmp, bar)
        final = data_dir / f"{split.kind}-{fp}"
        if _existing(final, fp):  # Written before, its sketch lost.
            shutil.rmtree(tmp, ignore_errors=True)
            won = False
        else:
            won = _publish(tmp, final, _manifest(split, fp))
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    _remember(data_dir, split, sketch, fp)
    return _result(data_dir, split, fp, not won)


def _names(fields: Sequence[FieldSpec]) -> List[str]:
    return [f"x{k}.npy" for k in range(len(fields) - 1)] + ["y.npy"]


def write_arrays(src: ArraySource, data_dir: pathlib.Path, split: str,
                 progress: bool) -> Written:
    """The arrays as ``.npy`` files, or the files written for them before."""
    rows = _rows_per_chunk(src.fields)

    def row(k: int, i: int) -> np.ndarray:
        return next(src.chunks(k, 1, start=i))

    return _write_split(_Split("npy", src.fields, len(src), _names(src.fields),
                               lambda k: src.chunks(k, rows), row),
                        data_dir, split, progress)


def write_tokens(tokens: np.ndarray, data_dir: pathlib.Path, split: str,
                 progress: bool) -> Written:
    """A 1-D token stream as ``tokens.npy``, reused by fingerprint."""
    dtype = data_mod.token_dtype(tokens)
    n, rows = len(tokens), CHUNK_BYTES // dtype.itemsize
    if n < 2:
        raise DataError(f"{split}: {n} token(s) make no window")

    def chunks(_: int) -> Iterator[np.ndarray]:
        for start in range(0, n, rows):
            yield np.ascontiguousarray(tokens[start:start + rows], dtype=dtype)

    def row(_: int, i: int) -> np.ndarray:
        return np.ascontiguousarray(tokens[i:i + 1], dtype=dtype)

    return _write_split(_Split("tokens", [FieldSpec(dtype, ())], n,
                               ["tokens.npy"], chunks, row),
                        data_dir, split, progress)


def write_items(src: ItemSource, data_dir: pathlib.Path, split: str,
                progress: bool) -> Written:
    """Reads every item once into chunk buffers, hashing and writing them."""
    n, rows = len(src), _rows_per_chunk(src.fields)
    names = _names(src.fields)
    data_dir.mkdir(parents=True, exist_ok=True)
    tmp = pathlib.Path(tempfile.mkdtemp(prefix=".tmp-", dir=data_dir))
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
                        view = _view(b[:got])
                        h.update(view)
                        f.write(view)
                    start += got
                    bar.update(got)
        finally:
            for f in files:
                f.close()
        fp = _combine("npy", [h.hexdigest() for h in hashers])
        split_ = _Split("npy", src.fields, n, names)
        final = data_dir / f"npy-{fp}"
        if _existing(final, fp):
            shutil.rmtree(tmp, ignore_errors=True)
            return _result(data_dir, split_, fp, True)
        won = _publish(tmp, final, _manifest(split_, fp))
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return _result(data_dir, split_, fp, not won)


def write(source: Any, data_dir: pathlib.Path, split: str,
          progress: bool) -> Written:
    """Writes (or finds) ``source``: an ArraySource, ItemSource or tokens."""
    if isinstance(source, ArraySource):
        return write_arrays(source, data_dir, split, progress)
    if isinstance(source, ItemSource):
        return write_items(source, data_dir, split, progress)
    return write_tokens(source, data_dir, split, progress)
