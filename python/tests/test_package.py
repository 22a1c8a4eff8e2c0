"""The package itself: generated stubs, importability, documentation."""
from __future__ import annotations

import os
import pydoc
import subprocess
import sys

import ringleader
from ringleader import _stubs
from conftest import REPO


def test_stubs_are_generated_and_ignored_by_git():
    assert _stubs.is_current()
    for name in ("job_pb2.py", "user_service_pb2_grpc.py"):
        path = _stubs.GENERATED_DIR / name
        assert path.exists()
        ignored = subprocess.run(["git", "-C", str(REPO), "check-ignore", "-q",
                                  str(path)])
        assert ignored.returncode == 0, f"{path} is not git-ignored"
    tracked = subprocess.run(["git", "-C", str(REPO), "ls-files",
                              "python/ringleader/v1"], capture_output=True,
                             text=True, check=True).stdout
    assert tracked == ""


def test_stale_stubs_are_regenerated(tmp_path, monkeypatch):
    """A .proto that changed since the stubs were made: the import
    regenerates them (here into a copy of the package)."""
    import shutil
    copy = tmp_path / "python" / "ringleader"
    shutil.copytree(REPO / "python" / "ringleader", copy,
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(REPO / "proto", tmp_path / "proto")
    job_proto = tmp_path / "proto" / "ringleader" / "v1" / "job.proto"
    job_proto.write_text(job_proto.read_text().replace(
        "message JobSpec {", "message JobSpec {\n  string drift_check = 99;"))
    code = ("import ringleader; "
            "print('drift_check' in ringleader.JobSpec.DESCRIPTOR.fields_by_name)")
    out = subprocess.run([sys.executable, "-c", code], cwd="/",
                         env={**os.environ, "PYTHONPATH": str(tmp_path / "python")},
                         capture_output=True, text=True, timeout=120)
    assert out.stdout.strip() == "True", out.stderr


def test_import_works_from_any_directory():
    out = subprocess.run(
        [sys.executable, "-c", "import ringleader; print(ringleader.__file__)"],
        cwd="/", env={**os.environ, "PYTHONPATH": str(REPO / "python")},
        capture_output=True, text=True, timeout=120)
    assert out.stdout.strip() == str(REPO / "python" / "ringleader" / "__init__.py")


def test_help_reads_like_torchs_docs():
    text = pydoc.render_doc(ringleader.fit, renderer=pydoc.plaintext)
    for part in ("fit(model:", "Args:", "model (nn.Module or Callable",
                 "Returns:", "Result:", "Raises:", "Example::"):
        assert part in text, part
    for obj in (ringleader.Client, ringleader.LocalCluster, ringleader.Result,
                ringleader.Client.submit, ringleader.Client.watch):
        assert obj.__doc__ and len(obj.__doc__) > 80, obj


def test_every_jobspec_field_has_a_keyword():
    keywords = ringleader.spec_keywords()
    paths = set(keywords.values())
    for field in ringleader.JobSpec.DESCRIPTOR.fields:
        assert field.name in keywords
    for sub in ("lr_schedule.warmup_steps", "ddp.gradient_compression",
                "export.safetensors_path", "dataset.augmentation.horizontal_flip"):
        assert sub in paths
    assert keywords["warmup_steps"] == "lr_schedule.warmup_steps"
    assert keywords["lr_schedule__kind"] == "lr_schedule.kind"
