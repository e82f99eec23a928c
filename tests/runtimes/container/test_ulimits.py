"""Function containers get modest rlimits of their own (nofile, nproc), whatever the engine's defaults."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from testing.pipeline_helpers import REPO, fnrun, function_config, load, test_images, write_package  # noqa: F401


@pytest.fixture(scope="module")
def probe_image(test_images: None) -> str:
    """The probe image as this checkout has it (the tag is shared: rebuilt when its hash differs)."""
    subprocess.run([sys.executable, str(REPO / "scripts" / "build_images.py"), "--only", "probe"], check=True, capture_output=True)
    return "fnrun-test/probe:v1"


def probe_data(root: Path, image: str, *args: str, env: dict[str, str] | None = None) -> dict[str, str]:
    write_package(root, {"fn.yaml": function_config(image)})
    result = fnrun("run", str(root), *args, env=env)
    assert result.code == 0, result
    return load(root / "sandbox-probe_configmap.yaml")["data"]


def test_function_containers_get_modest_ulimits(tmp_path: Path, probe_image: str) -> None:
    data = probe_data(tmp_path, probe_image)
    assert data["nofile"] == "1024:1024"
    assert data["nproc"] == "4096:4096"
