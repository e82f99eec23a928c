"""Where the function images' sources are: the Dockerfiles (in a checkout, or installed with the
package under `<prefix>/share/fnrun/Dockerfiles`) and the code they copy (the importable
`orchestrator` and `functions` packages). A build context is assembled from them in the
repository's layout, so one set of Dockerfiles serves a checkout and an installed wheel."""

from __future__ import annotations

import shutil
import site
import sys
import sysconfig
from pathlib import Path

import functions
import orchestrator
from orchestrator.errors import EnvironmentProblem

SHARED = Path("share") / "fnrun" / "Dockerfiles"
BASE_IMAGE_TAG = "fnrun/fnrun-base:v1"


def dockerfiles() -> Path:
    """The Dockerfiles of fnrun's own images: the checkout's, else the ones installed with it."""
    checkout = Path(orchestrator.__file__).resolve().parent.parent / "Dockerfiles"
    candidates = [checkout, Path(sysconfig.get_path("data")) / SHARED, Path(sys.prefix) / SHARED, Path(site.USER_BASE or "") / SHARED]
    for candidate in candidates:
        if (candidate / "fnrun-base.Dockerfile").is_file():
            return candidate
    raise EnvironmentProblem(f"fnrun's Dockerfiles are not installed (looked in {', '.join(str(c) for c in candidates)}); reinstall fnrun from its wheel")


def assemble(into: Path, repository: str = "fnrun") -> Path:
    """A build context in the repository's layout (orchestrator/, functions/, Dockerfiles/) from
    what is installed; images are tagged `<repository>/<name>:v1` and built FROM
    `<repository>/fnrun-base:v1`."""
    skip = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(Path(orchestrator.__file__).resolve().parent, into / "orchestrator", ignore=skip)
    shutil.copytree(Path(functions.__file__).resolve().parent, into / "functions", ignore=skip)
    shutil.copytree(dockerfiles(), into / "Dockerfiles", ignore=skip)
    _restore_executables(into)
    if repository != "fnrun":
        for dockerfile in (into / "Dockerfiles").glob("*.Dockerfile"):
            text = dockerfile.read_text()
            dockerfile.write_text(text.replace(BASE_IMAGE_TAG, f"{repository}/fnrun-base:v1"))
    return into


def _restore_executables(root: Path) -> None:
    """Give back the executable bit an installer drops (pip writes package files 0644): in the
    checkout a file is executable exactly when it starts with `#!` (a test holds the checkout to
    that), so the context built from a wheel has the checkout's modes, the same input hash, and
    one build serves both."""
    for path in root.rglob("*"):
        if path.is_file() and not path.is_symlink():
            with path.open("rb") as handle:
                if handle.read(2) == b"#!":
                    path.chmod(path.stat().st_mode | 0o111)
