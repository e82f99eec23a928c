"""KRM_FN_RUNTIME / KPT_FN_RUNTIME, as kpt users set them: podman finds podman's own socket (here a
real rootless-style service under $XDG_RUNTIME_DIR, holding an image the Docker engine does not
have), docker is the default, DOCKER_HOST still wins and the run says so, and a runtime fnrun
cannot drive is one line, exit 4, the package untouched."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import docker
import pytest

from orchestrator.errors import EnvironmentProblem
from orchestrator.runtimes.container import engine_choice
from testing.engine_fixtures import copy_images, podman_service
from testing.pipeline_helpers import assert_one_line_error, deployment, fnrun, load, snapshot, write_package

pytestmark = pytest.mark.usefixtures("test_images")
ONLY_IN_PODMAN = "fnrun-test/podman-only:v1"
NO_DOCKER_HOST = {"DOCKER_HOST": ""}


@pytest.fixture(scope="module")
def runtime_dir() -> Iterator[Path]:
    """An XDG_RUNTIME_DIR whose podman/podman.sock is a podman service holding ONLY_IN_PODMAN."""
    if Path(engine_choice.ROOTFUL_PODMAN).exists():
        pytest.skip("a rootful podman socket exists here: it would be chosen first")
    xdg = Path(tempfile.mkdtemp(prefix="fnrun-xdg-"))
    try:
        (xdg / "podman").mkdir()
        for host in podman_service(xdg / "podman"):
            client = docker.DockerClient(base_url=host, timeout=300)
            copy_images(client, ["fnrun-test/label:v1"])
            client.api.tag("fnrun-test/label:v1", "fnrun-test/podman-only", "v1")
            yield xdg
    finally:
        shutil.rmtree(xdg, ignore_errors=True)


@pytest.mark.parametrize("variable", ["KRM_FN_RUNTIME", "KPT_FN_RUNTIME"])
def test_podman_finds_its_own_socket(tmp_path: Path, runtime_dir: Path, variable: str) -> None:
    root = write_package(tmp_path, {"web.yaml": deployment("web")})
    env = {**NO_DOCKER_HOST, "XDG_RUNTIME_DIR": str(runtime_dir), variable: "podman"}
    result = fnrun("run", str(root), "-i", ONLY_IN_PODMAN, "--image-pull-policy", "never", "--", "tier=web", env=env)
    assert result.code == 0, result
    assert load(root / "web.yaml")["metadata"]["labels"] == {"tier": "web"}
    assert f"{variable}=podman: using podman's socket {runtime_dir}/podman/podman.sock" in result.stderr
    assert result.stderr.count("using podman's socket") == 1  # said by the run's connection, once


def test_docker_is_the_default(tmp_path: Path) -> None:
    root = write_package(tmp_path, {"web.yaml": deployment("web")})
    result = fnrun("run", str(root), "-i", "fnrun-test/label:v1", "--", "tier=web", env={"KRM_FN_RUNTIME": "docker"})
    assert result.code == 0, result
    assert "fnrun: KRM_FN_RUNTIME" not in result.stderr


def test_docker_host_wins_and_the_run_says_so(tmp_path: Path) -> None:
    root = write_package(tmp_path, {"web.yaml": deployment("web")})
    host = engine_choice.host({})  # the Docker engine the suite runs on
    result = fnrun("run", str(root), "-i", "fnrun-test/label:v1", "--", "tier=web", env={"DOCKER_HOST": host, "KRM_FN_RUNTIME": "podman"})
    assert result.code == 0, result
    assert f"DOCKER_HOST={host} wins over KRM_FN_RUNTIME=podman" in result.stderr
    assert result.stderr.count("wins over") == 1


@pytest.mark.parametrize(("value", "needle"), [("nerdctl", "KRM_FN_RUNTIME=nerdctl"), ("rkt", "KRM_FN_RUNTIME='rkt'")])
def test_a_runtime_fnrun_cannot_drive_is_one_line_exit_4(tmp_path: Path, value: str, needle: str) -> None:
    root = write_package(tmp_path, {"web.yaml": deployment("web")})
    before = snapshot(root)
    assert_one_line_error(fnrun("run", str(root), "-i", "fnrun-test/label:v1", "--", "tier=web", env={**NO_DOCKER_HOST, "KRM_FN_RUNTIME": value}), needle, code=4)
    assert snapshot(root) == before


def test_podman_without_a_socket_names_where_it_looked(tmp_path: Path) -> None:
    root = write_package(tmp_path / "pkg", {"web.yaml": deployment("web")})
    before = snapshot(root)
    env = {**NO_DOCKER_HOST, "KRM_FN_RUNTIME": "podman", "XDG_RUNTIME_DIR": str(tmp_path / "empty")}
    assert_one_line_error(fnrun("run", str(root), "-i", "fnrun-test/label:v1", "--", "tier=web", env=env), f"{tmp_path}/empty/podman/podman.sock", code=4)
    assert snapshot(root) == before


def test_the_choice_reads_the_variables_as_kpt_does() -> None:
    assert engine_choice.chosen({}).host is None
    assert engine_choice.chosen({"KPT_FN_RUNTIME": "docker"}).host is None
    assert engine_choice.chosen({"DOCKER_HOST": "tcp://engine:2376", "KRM_FN_RUNTIME": "nerdctl"}).host == "tcp://engine:2376"
    with pytest.raises(EnvironmentProblem, match="KRM_FN_RUNTIME=nerdctl"):
        engine_choice.chosen({"KRM_FN_RUNTIME": "nerdctl", "KPT_FN_RUNTIME": "docker"})  # the new name wins
