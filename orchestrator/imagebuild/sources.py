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
    for script in (into / "functions").glob("*.sh"):  # an installer may drop the executable bit
        script.chmod(0o755)
    if repository != "fnrun":
        for dockerfile in (into / "Dockerfiles").glob("*.Dockerfile"):
            text = dockerfile.read_text()
            dockerfile.write_text(text.replace(BASE_IMAGE_TAG, f"{repository}/fnrun-base:v1"))
    return into
