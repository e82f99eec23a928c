"""Shared by test_catalog_images.py and the tests that check other paths against it."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import docker
import pytest

from orchestrator.imagebuild import engine
from testing.pipeline_helpers import REPO

SAMPLES = REPO / "samples"


CATALOG = ("set-namespace", "set-labels", "require-resource-limits", "tshirt-size", "inject-sidecar", "check-service-selectors")


VALIDATORS = ("require-resource-limits", "check-service-selectors")


Hunk = tuple[list[str], list[str]]  # (lines removed, lines added) at one place


Edit = Callable[[Path], None]


def image(name: str) -> str:
    return f"fnrun/{name}:v1"


def module(name: str) -> str:
    return name.replace("-", "_")


def _build_images_module() -> Any:
    """scripts/build_images.py as a module: its own input hash says whether an image is stale."""
    if "build_images" not in sys.modules:  # test_images.py may have loaded it already
        spec = importlib.util.spec_from_file_location("build_images", REPO / "scripts" / "build_images.py")
        assert spec and spec.loader
        loaded = importlib.util.module_from_spec(spec)
        sys.modules["build_images"] = loaded  # its dataclasses look their module up there
        spec.loader.exec_module(loaded)
    return sys.modules["build_images"]


def _unready(client: docker.DockerClient) -> list[str]:
    """The catalog images (and fnrun-base, which they are built FROM) that are missing or were built
    from other sources than this checkout's: a fix in functions/ must reach the image under test."""
    build_images = _build_images_module()
    base = os.environ.get("BASE_IMAGE") or build_images.BASE_TAG
    targets = engine.select(build_images.discover(REPO), list(CATALOG), base)
    functions_dir = REPO / "functions"
    return [t.tag for t in targets
            if engine.current_hash(client, t.tag) != engine.input_hash(client, t, t.context, base, functions_dir)]


@pytest.fixture(scope="session")
def catalog_images() -> tuple[str, ...]:
    """The six catalog images, built with `scripts/build_images.py --only ...` when missing or stale
    (.ci/setup builds everything before the suite; this keeps a lone `pytest` run honest)."""
    client = docker.from_env()
    missing = [n for n in CATALOG if not client.images.list(name=image(n))]
    if missing or _unready(client):
        proc = subprocess.run([sys.executable, str(REPO / "scripts" / "build_images.py"), "--only", *CATALOG],
                              cwd=REPO, capture_output=True, text=True, timeout=1800)
        if proc.returncode != 0:
            pytest.fail(f"scripts/build_images.py --only {' '.join(CATALOG)} failed:\n{proc.stdout}{proc.stderr}")
    still = [n for n in CATALOG if not client.images.list(name=image(n))]
    assert not still, f"images still missing after the build: {still}"
    return tuple(image(n) for n in CATALOG)


def copy_sample(name: str, into: Path, edit: Edit | None = None) -> Path:
    """A copy of samples/<name>/ (edited, when a case needs the sample to fail or to change)."""
    package = into / name
    shutil.copytree(SAMPLES / name, package)
    if edit is not None:
        edit(package)
    return package


def replace_in(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert text.count(old) == 1, (path, old)
    path.write_text(text.replace(old, new))


def _include_selectors(package: Path) -> None:
    replace_in(package / "fn-config.yaml", '  cost-center: "4711"\n', '  cost-center: "4711"\n  includeSelectors: "true"\n')


def _drop_limits(package: Path) -> None:
    """No limits on the init container, no memory limit on the worker."""
    workers = package / "workers.yaml"
    replace_in(workers, "          resources:\n            limits:\n              cpu: 100m\n              memory: 32Mi\n", "")
    replace_in(workers, "              memory: 512Mi\n", "")


def _unmatch(package: Path) -> None:
    """The pods lose the label the Service selects on."""
    replace_in(package / "workloads.yaml", "tier: backend # what", "tier: frontend # what")


EXEC_CASES: list[Any] = [
    *[pytest.param(name, None, id=name) for name in CATALOG],
    pytest.param("set-labels", _include_selectors, id="set-labels-include-selectors"),
    pytest.param("require-resource-limits", _drop_limits, id="require-resource-limits-failing"),
    pytest.param("check-service-selectors", _unmatch, id="check-service-selectors-failing"),
]
