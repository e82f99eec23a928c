"""Which catalog images fnrun may serve by their own code: the image-to-module catalog, the hash
of the code a builtin would run, and a run's check of an image's label against it.

Apart from `builtin.py` because every container function asks this question and most get "no": a
run that serves none by a builtin then loads nothing of the fork server, the confinement or the
hand-over (the `--server` client's edit loop, where each import shows)."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from orchestrator.runtimes.protocol import Invocation

SOURCE_HASH_LABEL = "dev.fnrun.source-hash"
# The functions package this fnrun has; the child imports it from there too (PYTHONPATH), so the
# code hashed is the code run.
FUNCTIONS_DIR = Path(__file__).resolve().parents[3] / "functions"  # orchestrator/runtimes/host/ -> the repository

# image -> module run by its ENTRYPOINT (tests/runtimes/host/test_builtin.py checks this against Dockerfiles/)
CATALOG: dict[str, str] = {
    f"fnrun/{name}:v1": f"functions.{name.replace('-', '_')}"
    for name in (
        "set-labels",
        "set-namespace",
        "require-resource-limits",
        "tshirt-size",
        "inject-sidecar",
        "check-service-selectors",
    )
}


def source_files(module: str, functions_dir: Path = FUNCTIONS_DIR) -> list[Path]:
    """What a catalog function's behaviour depends on: its module, the functions package and the SDK."""
    name = module.split(".", 1)[1]
    return [functions_dir / "__init__.py", *sorted((functions_dir / "sdk").glob("*.py")), functions_dir / f"{name}.py"]


def source_hash(module: str, functions_dir: Path = FUNCTIONS_DIR) -> str:
    """One hash shared by the image label and the builtin decision."""
    return files_hash(source_files(module, functions_dir), functions_dir)


def files_hash(files: list[Path], functions_dir: Path = FUNCTIONS_DIR) -> str:
    """sha256 over each file's path under `functions_dir` and its bytes, in the order given."""
    digest = hashlib.sha256()
    for path in files:
        digest.update(path.relative_to(functions_dir).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


class SourceCheck:
    """Which catalog images a run may serve by their own code: an image's source-hash label
    asked of the engine once and a module's hash computed once per run (the prestart check and
    the step both need them, and a pipeline may name an image more than once). The run's
    registry holds one; a new run asks again, as an image may have been rebuilt meanwhile.
    `connect`: the run's engine client, for the transports only the SDK speaks."""

    def __init__(self, connect: Callable[[], Any] | None = None) -> None:
        self._labels: dict[str, object] = {}
        self._hashes: dict[str, str] = {}
        self._connect = connect

    def module_for(self, invocation: Invocation) -> str | None:
        """The module to run in-process for this container invocation, or None to start the image."""
        module = CATALOG.get(invocation.image or "")
        if module is None or invocation.mounts or invocation.network or invocation.sandbox.image_pull_policy == "always":
            return None  # what it mounts, reaches or pulls, only the container can say
        label = self._image_label(invocation.image or "")
        if label is _ABSENT or label == self._installed_hash(module):
            return module
        return None

    def _installed_hash(self, module: str) -> str:
        if module not in self._hashes:
            self._hashes[module] = source_hash(module)
        return self._hashes[module]

    def _image_label(self, image: str) -> object:
        """The source-hash label of the local image; _ABSENT when there is no such image (or no engine)."""
        if image not in self._labels:
            from orchestrator.runtimes.container.inspect import inspect_image

            found = inspect_image(image, self._connect)
            self._labels[image] = _ABSENT if found is None else ((found.get("Config") or {}).get("Labels") or {}).get(SOURCE_HASH_LABEL)
        return self._labels[image]


_ABSENT = object()
