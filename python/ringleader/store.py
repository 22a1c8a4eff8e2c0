"""Writing a split once under ``data_dir``, and finding it again.

Each split becomes a directory ``npy-<id>`` (``x0.npy``... one per input,
``y.npy``) or ``tokens-<id>`` (``tokens.npy``) with a ``manifest.json``.
Files go to a private temporary directory first and are renamed into place
whole, so a reader (a worker, a concurrent ``fit``) never sees half a
dataset.

A later call with the same data reuses the directory. Its content
fingerprint is a hash of the fields' dtypes, shapes and bytes (XXH3-128 from
Debian's python3-xxhash, ~15 GB/s; else SHA-256). XXH3 is not
cryptographic: it tells any accidental change apart, which is what reuse
needs in the user's own ``data_dir``. To keep a first write at what
``np.save`` costs, hashing happens only when reuse is possible:
  * each directory is listed under a sketch of its split (the dtypes,
    shapes and 16 sampled rows of each field) in ``data_dir/.sketches``;
  * a split whose sketch lists nothing is new: it is written, not hashed;
  * one whose sketch lists directories is hashed whole, and so is each of
    those directories once (its fingerprint is then kept in its manifest);
    equal fingerprints reuse the directory and nothing is written.
A sketch is only a hint; the fingerprints decide. Chunks are about
``CHUNK_BYTES``, so a ``np.memmap`` larger than memory streams through. A
Dataset is read once, item by item into chunk buffers that are hashed and
written as they fill.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import pathlib
import secrets
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
    chunks: Callable[[int], Iterator[np.ndarray]]  # field -> its chunks
    row: Callable[[int, int], np.ndarray]  # (field, index) -> one sample


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


def _view(chunk: np.ndarray) -> memoryview:
    return memoryview(np.ascontiguousarray(chunk)).cast("B")


def _open_npy(path: pathlib.Path, spec: FieldSpec, samples: int):
    f = open(path, "wb")
    np.lib.format.write_array_header_1_0(f, {
        "descr": np.lib.format.dtype_to_descr(spec.dtype),
        "fortran_order": False,
        "shape": (samples,) + tuple(spec.shape),
    })
    return f


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


def _hash(split: _Split, bar) -> str:
    """The content fingerprint: every field's bytes, hashed whole."""
    digests = []
    for k, spec in enumerate(split.fields):
        h = _field_hasher(spec, split.samples)
        for chunk in split.chunks(k):
            view = _view(chunk)
            h.update(view)
            bar.update(view.nbytes)
        digests.append(h.hexdigest())
    return _combine(split.kind, digests)


def _stored(directory: pathlib.Path) -> Optional[_Split]:
    """A written directory as a split (its files memory-mapped), from its
    manifest; None when it is gone or not whole."""
    try:
        m = json.loads((directory / MANIFEST).read_text())
        arrays = [np.load(directory / f["file"], mmap_mode="r")
                  for f in m["fields"]]
    except (OSError, ValueError, KeyError):
        return None
    fields = [FieldSpec(np.dtype(f["dtype"]), tuple(f["shape"]))
              for f in m["fields"]]
    rows = _rows_per_chunk(fields)

    def chunks(k: int) -> Iterator[np.ndarray]:
        for start in range(0, m["samples"], rows):
            yield arrays[k][start:start + rows]

    return _Split(m["kind"], fields, m["samples"],
                  [f["file"] for f in m["fields"]], chunks,
                  lambda k, i: arrays[k][i:i + 1])


def _stored_fingerprint(directory: pathlib.Path, bar) -> Optional[str]:
    """The directory's fingerprint: from its manifest, or hashed now from
    its files and kept there (once per directory)."""
    try:
        manifest = json.loads((directory / MANIFEST).read_text())
    except (OSError, ValueError):
        return None
    if manifest.get("fingerprint"):
        return manifest["fingerprint"]
    split = _stored(directory)
    if split is None:
        return None
    manifest["fingerprint"] = _hash(split, bar)
    _replace_text(directory / MANIFEST, json.dumps(manifest, indent=1))
    return manifest["fingerprint"]


def _replace_text(path: pathlib.Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}")
    tmp.write_text(text)
    os.replace(tmp, path)


def _sketch_file(data_dir: pathlib.Path, kind: str, sketch: str):
    return data_dir / SKETCHES / f"{kind}-{sketch}"


def _listed(data_dir: pathlib.Path, kind: str, sketch: str) -> List[str]:
    try:
        text = _sketch_file(data_dir, kind, sketch).read_text()
    except OSError:
        return []
    return [line for line in text.split() if line]


def _remember(data_dir: pathlib.Path, kind: str, sketch: str,
              name: str) -> None:
    """Lists directory ``name`` under its sketch (a cache: a lost entry
    only costs a later write)."""
    path = _sketch_file(data_dir, kind, sketch)
    path.parent.mkdir(exist_ok=True)
    names = [n for n in _listed(data_dir, kind, sketch)
             if (data_dir / n).is_dir()]
    _replace_text(path, "\n".join(names + [name]) + "\n")


def _manifest(kind: str, names: Sequence[str], fields: Sequence[FieldSpec],
              samples: int, fingerprint: Optional[str]) -> dict:
    return {"format": FORMAT, "kind": kind, "hash": HASH,
            "fingerprint": fingerprint, "samples": samples,
            "fields": [{"file": n, "dtype": f.dtype.str, "shape": list(f.shape)}
                       for n, f in zip(names, fields)]}


def _publish(tmp: pathlib.Path, kind: str, manifest: dict) -> pathlib.Path:
    """Renames ``tmp`` to a fresh ``<kind>-<id>`` beside it."""
    (tmp / MANIFEST).write_text(json.dumps(manifest, indent=1))
    final = tmp.parent / f"{kind}-{secrets.token_hex(8)}"
    os.rename(tmp, final)
    return final


def _written(final: pathlib.Path, names: Sequence[str], samples: int,
             fields: Sequence[FieldSpec], reused: bool) -> Written:
    if reused:
        os.utime(final)  # Last used: what a clean-up by age would go by.
    return Written(final, [str(final / n) for n in names], samples,
                   list(fields), reused)


def _find(split: _Split, data_dir: pathlib.Path, sketch: str, desc: str,
          progress: bool) -> Optional[pathlib.Path]:
    """A directory holding exactly this split, if its sketch lists one."""
    listed = [data_dir / n for n in _listed(data_dir, split.kind, sketch)]
    listed = [d for d in listed if d.is_dir()]
    if not listed:
        return None
    total = _bytes(split.fields, split.samples)
    with _progress(total * 2, f"checking {desc}", progress) as bar:
        mine = _hash(split, bar)
        for directory in listed:
            if _stored_fingerprint(directory, bar) == mine:
                return directory
    return None


def _write_split(split: _Split, data_dir: pathlib.Path, desc: str,
                 progress: bool) -> Written:
    data_dir.mkdir(parents=True, exist_ok=True)
    sketch = _sketch(split)
    found = _find(split, data_dir, sketch, desc, progress)
    if found is not None:
        return _written(found, split.names, split.samples, split.fields, True)
    tmp = pathlib.Path(tempfile.mkdtemp(prefix=".tmp-", dir=data_dir))
    try:
        total = _bytes(split.fields, split.samples)
        with _progress(total, f"writing {desc}", progress) as bar:
            for k, spec in enumerate(split.fields):
                with _open_npy(tmp / split.names[k], spec, split.samples) as f:
                    for chunk in split.chunks(k):
                        view = _view(chunk)
                        f.write(view)
                        bar.update(view.nbytes)
        final = _publish(tmp, split.kind, _manifest(
            split.kind, split.names, split.fields, split.samples, None))
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    _remember(data_dir, split.kind, sketch, final.name)
    return _written(final, split.names, split.samples, split.fields, False)


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
    """A 1-D token stream as ``tokens.npy``, or the file written before."""
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


def _write_items_to(src: ItemSource, tmp: pathlib.Path, names: List[str],
                    desc: str, progress: bool) -> str:
    """Reads every item once into chunk buffers, hashing and writing them;
    returns the fingerprint."""
    n, rows = len(src), _rows_per_chunk(src.fields)
    hashers = [_field_hasher(f, n) for f in src.fields]
    buffers = [np.empty((min(rows, n),) + f.shape, f.dtype) for f in src.fields]
    files = [_open_npy(tmp / name, f, n) for name, f in zip(names, src.fields)]
    try:
        with _progress(n, f"writing {desc}", progress, "item") as bar:
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
    return _combine("npy", [h.hexdigest() for h in hashers])


def write_items(src: ItemSource, data_dir: pathlib.Path, split: str,
                progress: bool) -> Written:
    """A Dataset, read once: its files, or the same content written before
    (then the new copy is dropped)."""
    n, names = len(src), _names(src.fields)
    data_dir.mkdir(parents=True, exist_ok=True)
    tmp = pathlib.Path(tempfile.mkdtemp(prefix=".tmp-", dir=data_dir))
    try:
        fp = _write_items_to(src, tmp, names, split, progress)
        manifest = _manifest("npy", names, src.fields, n, fp)
        (tmp / MANIFEST).write_text(json.dumps(manifest, indent=1))
        copy = _stored(tmp)
        assert copy is not None
        sketch = _sketch(copy)
        for name in _listed(data_dir, "npy", sketch):
            if _stored_fingerprint(data_dir / name, _NoBar()) == fp:
                shutil.rmtree(tmp, ignore_errors=True)
                return _written(data_dir / name, names, n, src.fields, True)
        final = _publish(tmp, "npy", manifest)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    _remember(data_dir, "npy", sketch, final.name)
    return _written(final, names, n, src.fields, False)


class _NoBar:
    def update(self, _: int) -> None:
        pass


def write(source: Any, data_dir: pathlib.Path, split: str,
          progress: bool) -> Written:
    """Writes (or finds) ``source``: an ArraySource, ItemSource or tokens."""
    if isinstance(source, ArraySource):
        return write_arrays(source, data_dir, split, progress)
    if isinstance(source, ItemSource):
        return write_items(source, data_dir, split, progress)
    return write_tokens(source, data_dir, split, progress)
