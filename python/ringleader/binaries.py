"""Where the daemons are: the build the README made, a setting, or PATH."""
from __future__ import annotations

import os
import pathlib
import shutil
from typing import Dict, List, Optional, Sequence

from .errors import ClusterError

BIN_DIR_ENV = "RINGLEADER_BIN_DIR"
REPO_ROOT = pathlib.Path(__file__).resolve().parent.parent.parent
# Each binary's Bazel package: bazel-bin/<package>/<name>.
PACKAGES = {
    "ringleader-coordinator": "coordinator",
    "ringleader-worker": "worker",
    "ringctl": "cli",
}
BUILD_COMMAND = ("bazel build //coordinator:ringleader-coordinator "
                 "//worker:ringleader-worker //cli:ringctl")


def _in_dir(directory: pathlib.Path, name: str) -> Optional[str]:
    """``directory/name``, or ``directory/<package>/name`` (a bazel-bin)."""
    for path in (directory / name, directory / PACKAGES[name] / name):
        if path.is_file() and os.access(path, os.X_OK):
            return str(path)
    return None


def search_dirs(bin_dir: Optional[str] = None) -> List[pathlib.Path]:
    """The directories tried, in order: ``bin_dir``, ``$RINGLEADER_BIN_DIR``,
    then this repository's ``bazel-bin``."""
    dirs = [d for d in (bin_dir, os.environ.get(BIN_DIR_ENV)) if d]
    return [pathlib.Path(d) for d in dirs] + [REPO_ROOT / "bazel-bin"]


def find(names: Sequence[str], bin_dir: Optional[str] = None
         ) -> Dict[str, str]:
    """Paths of ``names``, all from the first place that has every one.

    One place for all of them, so a coordinator and workers from two
    different builds are never mixed. An explicit ``bin_dir`` (or
    ``$RINGLEADER_BIN_DIR``) that lacks one is an error, not a fallback.
    """
    explicit = [d for d in (bin_dir, os.environ.get(BIN_DIR_ENV)) if d]
    for i, directory in enumerate(search_dirs(bin_dir)):
        found = {n: _in_dir(directory, n) for n in names}
        if all(found.values()):
            return found  # type: ignore[return-value]
        if i < len(explicit):
            missing = [n for n, p in found.items() if p is None]
            raise ClusterError(
                f"{', '.join(missing)} not found in {directory} "
                f"({'bin_dir' if bin_dir and i == 0 else BIN_DIR_ENV})")
    on_path = {n: shutil.which(n) for n in names}
    if all(on_path.values()):
        return on_path  # type: ignore[return-value]
    raise ClusterError(
        f"the Ringleader daemons are not built: no {' and '.join(names)} in "
        f"{REPO_ROOT / 'bazel-bin'} or on PATH. Build them with\n"
        f"    cd {REPO_ROOT} && {BUILD_COMMAND}\n"
        f"or point {BIN_DIR_ENV} at a directory that has them.")
