"""The launcher's early container is spoken of only when it exists: an engine that is not there,
refuses the connection, or refuses the create leaves one error line (exit 4), and no warning
about removing a container that was never created."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from testing.pipeline_helpers import assert_one_line_error, fnrun, write_package


def package(root: Path) -> Path:
    return write_package(root, {"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n"})


@pytest.mark.parametrize("engine", ["absent", "refusing"])
def test_no_engine_no_word_of_an_early_container(tmp_path: Path, engine: str) -> None:
    path = tmp_path / "engine.sock"
    if engine == "refusing":  # a socket file nobody listens on, as a stopped engine leaves it
        bound = socket.socket(socket.AF_UNIX)
        bound.bind(str(path))
        bound.close()
    env = {"DOCKER_HOST": f"unix://{path}", "FNRUN_CACHE": "0", "FNRUN_EARLY_START": "1"}
    result = fnrun("run", str(package(tmp_path / "pkg")), "--image", "fnrun-test/label:v1", "--", "a=b", env=env)
    assert_one_line_error(result, "cannot reach the container engine", code=4)
    assert "early container" not in result.stderr and "warning" not in result.stderr, result.stderr


def test_a_create_the_engine_refused_is_no_container(tmp_path: Path, test_images: None) -> None:
    env = {"FNRUN_CACHE": "0", "FNRUN_EARLY_START": "1"}
    result = fnrun("run", str(package(tmp_path / "pkg")), "--image", "fnrun-test/no-such-image:v1", "--image-pull-policy", "never", env=env)
    assert_one_line_error(result, "fnrun-test/no-such-image:v1", code=4)
    assert "early container" not in result.stderr, result.stderr
