"""Function containers get modest rlimits of their own (nofile, nproc), whatever the engine's defaults."""

from __future__ import annotations

from pathlib import Path

from testing.pipeline_helpers import REPO, fnrun, function_config, load, write_package  # noqa: F401


def probe_data(root: Path, image: str, *args: str, env: dict[str, str] | None = None) -> dict[str, str]:
    write_package(root, {"fn.yaml": function_config(image)})
    result = fnrun("run", str(root), *args, env=env)
    assert result.code == 0, result
    return load(root / "sandbox-probe_configmap.yaml")["data"]


def test_function_containers_get_modest_ulimits(tmp_path: Path, probe_image: str) -> None:
    data = probe_data(tmp_path, probe_image)
    assert data["nofile"] == "1024:1024"
    assert data["nproc"] == "4096:4096"
