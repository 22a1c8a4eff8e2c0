"""Writing data for the workers: forms, dtypes, chunks, reuse, bad items."""
from __future__ import annotations

import json
import os
import shutil

import numpy as np
import pytest
import torch
from torch.utils.data import Dataset, IterableDataset, TensorDataset

import ringleader
from ringleader import data, store


class Pairs(Dataset):
    """A map-style dataset of (image, label) tuples, as torchvision's."""

    def __init__(self, x, y, bad=None):
        self.x, self.y, self.bad = x, y, bad or {}

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        if i in self.bad:
            return self.bad[i]
        return torch.from_numpy(self.x[i]), int(self.y[i])


def write(split_data, tmp_path, task="classification"):
    src = data.source(split_data, "train", task)
    return store.write(src, tmp_path, "train", progress=False)


def arrays(n=300):
    rng = np.random.default_rng(0)
    return rng.random((n, 3, 4, 4), dtype=np.float32), rng.integers(0, 10, n)


def test_dataset_of_tuples_is_written_as_npy(tmp_path):
    x, y = arrays()
    w = write(Pairs(x, y), tmp_path)
    assert not w.reused and w.samples == 300
    assert np.array_equal(np.load(w.inputs[0]), x)
    assert np.load(w.targets).dtype == np.int64
    assert np.array_equal(np.load(w.targets), y)
    manifest = json.loads((w.directory / "manifest.json").read_text())
    assert manifest["samples"] == 300 and manifest["fingerprint"]  # hashed


def test_every_array_form_gives_the_same_files(tmp_path):
    x, y = arrays()
    first = write(Pairs(x, y), tmp_path)
    for form in [(x, y), [x, y], (torch.from_numpy(x), torch.from_numpy(y)),
                 TensorDataset(torch.from_numpy(x), torch.from_numpy(y))]:
        again = write(form, tmp_path)
        assert again.reused and again.directory == first.directory
    assert len([d for d in os.listdir(tmp_path) if d.startswith("npy-")]) == 1


def test_dtypes_are_widened_to_what_workers_read(tmp_path):
    x = np.arange(40, dtype=np.float64).reshape(10, 4)
    flags = np.zeros((10, 2), dtype=bool)
    w = write((x, flags, np.arange(10, dtype=np.int16)), tmp_path)
    assert [np.load(f).dtype for f in w.files] == [np.float32, np.uint8, np.int32]
    with pytest.raises(ringleader.DataError, match="complex"):
        write((x.astype(np.complex64), np.arange(10)), tmp_path)


def test_large_data_is_written_in_chunks(tmp_path, monkeypatch):
    monkeypatch.setattr(store, "CHUNK_BYTES", 1000)  # ~5 samples a chunk
    x, y = arrays(257)
    mapped = np.lib.format.open_memmap(tmp_path / "big.npy", "w+", np.float32,
                                       x.shape)
    mapped[:] = x
    from_memmap = write((mapped, y), tmp_path / "a")
    from_items = write(Pairs(x, y), tmp_path / "a")
    assert from_items.reused and from_items.directory == from_memmap.directory
    from_items = write(Pairs(x, y), tmp_path / "b")
    for w in (from_memmap, from_items):
        assert np.array_equal(np.load(w.inputs[0]), x)
        assert np.array_equal(np.load(w.targets), y)


def test_other_data_gets_another_fingerprint(tmp_path):
    x, y = arrays()
    a = write((x, y), tmp_path)
    y2 = y.copy()
    y2[-1] = (y2[-1] + 1) % 10
    b = write((x, y2), tmp_path)
    assert a.directory != b.directory and not b.reused


def test_a_ragged_item_is_named_by_index(tmp_path):
    x, y = arrays(50)
    bad = {17: (torch.zeros(3, 4, 5), 1)}
    with pytest.raises(ringleader.DataError,
                       match=r"train item 17: field 0 \(input 0\) is float32 "
                             r"\[3, 4, 5\], but item 0's is float32 \[3, 4, 4\]"):
        write(Pairs(x, y, bad), tmp_path)
    assert os.listdir(tmp_path) == []  # The partial write is gone.


def test_a_wrong_dtype_is_named_by_index(tmp_path):
    x, y = arrays(50)
    bad = {23: (torch.from_numpy(x[23]).double(), 1)}
    with pytest.raises(ringleader.DataError, match="train item 23: field 0 .* float64"):
        write(Pairs(x, y, bad), tmp_path)
    label = {31: (torch.from_numpy(x[31]), 2.5)}
    with pytest.raises(ringleader.DataError, match="train item 31: field 1 \\(target\\)"):
        write(Pairs(x, y, label), tmp_path)


def test_items_that_are_not_samples(tmp_path):
    x, y = arrays(10)
    cases = [
        (Pairs(x, y, {0: torch.zeros(3)}), "train item 0 is a Tensor"),
        (Pairs(x, y, {4: (torch.zeros(3, 4, 4), "cat")}), "train item 4: field 1 is a str"),
        (Pairs(x, y, {0: (torch.zeros(3),)}), "at least an input and a target"),
        (x, "one array"),
        ((x, y[:5]), "field 1 has 5 samples"),
        (object(), "not a dataset"),
    ]
    for bad, words in cases:
        with pytest.raises(ringleader.DataError, match=words):
            write(bad, tmp_path)

    class Stream(IterableDataset):
        def __iter__(self):
            yield torch.zeros(2), 0
    with pytest.raises(ringleader.DataError, match="map-style"):
        write(Stream(), tmp_path)


def test_targets_fit_the_task(tmp_path):
    x, y = arrays(10)
    with pytest.raises(ringleader.DataError, match="task='regression'"):
        write((x, y.astype(np.float32)), tmp_path)
    w = write((x, y.astype(np.float64)), tmp_path, task="regression")
    assert np.load(w.targets).dtype == np.float32


def test_tokens(tmp_path):
    ids = np.frombuffer(b"hello world, hello tokens" * 10, dtype=np.uint8)
    a = store.write(data.tokens(ids, "train"), tmp_path, "train", False)
    assert np.load(a.files[0]).dtype == np.uint16
    assert np.array_equal(np.load(a.files[0]), ids)
    b = store.write(data.tokens(torch.from_numpy(ids.astype(np.int64)), "train"),
                    tmp_path, "train", False)
    assert b.directory != a.directory  # int64 ids are written as int64
    bad = ids.astype(np.int64)
    bad[123] = 300
    with pytest.raises(ringleader.DataError,
                       match="token id 300 at position 123 is >= the model's "
                             "vocabulary size 256"):
        data.check_token_range(bad, 256, "train")
    bad[7] = -1
    with pytest.raises(ringleader.DataError, match="token id -1 at position 7"):
        data.check_token_range(bad, 256, "train")
    for wrong, words in [(ids.reshape(25, 10), "1-D"),
                         (ids.astype(np.float32), "integers")]:
        with pytest.raises(ringleader.DataError, match=words):
            data.tokens(wrong, "train")


def test_a_sketch_finds_data_seen_before_and_the_hash_decides(tmp_path):
    x, y = arrays()
    first = write((x, y), tmp_path)
    manifest = first.directory / "manifest.json"
    assert json.loads(manifest.read_text())["fingerprint"] is None  # Not hashed.
    assert len(os.listdir(tmp_path / store.SKETCHES)) == 1
    # Same sketch (sampled rows unchanged), other bytes: written anew.
    x2 = x.copy()
    x2[1, 0, 0, 0] += 1.0
    assert 1 not in {int(i) for i in np.linspace(0, 299, store.SKETCH_ROWS)}
    second = write((x2, y), tmp_path)
    assert not second.reused and second.directory != first.directory
    assert np.array_equal(np.load(second.inputs[0]), x2)
    assert json.loads(manifest.read_text())["fingerprint"]  # Hashed once.
    # Both stay findable, each by its own content.
    assert write((x, y), tmp_path).directory == first.directory
    assert write((x2, y), tmp_path).directory == second.directory
    # A lost sketch costs one more copy, never a wrong reuse.
    shutil.rmtree(tmp_path / store.SKETCHES)
    third = write((x, y), tmp_path)
    assert not third.reused and np.array_equal(np.load(third.inputs[0]), x)
    assert not [d for d in os.listdir(tmp_path) if d.startswith(".tmp-")]
