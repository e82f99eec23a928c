"""`fnrun doctor` starts a real function container, and a container that cannot start is explained.

Against the machine's Docker engine the probe runs; against a podman service left with its default
crun on a host with hybrid cgroups (as these machines are) nothing can start: doctor fails with the
fix, `fnrun run` fails with one line naming the function and the fix (exit 4, the environment), and
`--runtime runc` is refused rather than silently ignored, since podman's API does not apply it.
Started with `podman --runtime runc`, the same service passes.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import docker
import pytest

from testing.engine_fixtures import copy_images, podman_service
from testing.pipeline_helpers import assert_one_line_error, fnrun, snapshot, write_package

HYBRID = Path("/sys/fs/cgroup/unified").is_dir()  # cgroup v1 controllers beside a v2 hierarchy
IDENTITY = "fnrun-test/identity:v1"
CONFIGMAP = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n"


def container_line(stdout: str) -> list[str]:
    lines = stdout.splitlines()
    return [line + (" || " + lines[i + 1].strip() if i + 1 < len(lines) and lines[i + 1].strip().startswith("fix:") else "")
            for i, line in enumerate(lines) if line.split()[1:2] == ["container"]]


def test_doctor_runs_a_function_container_on_docker(test_images: None) -> None:
    result = fnrun("doctor", env={"DOCKER_HOST": ""})
    assert result.code == 0, result
    [line] = container_line(result.stdout)
    assert line.startswith("ok   container a function container ran in the full sandbox and answered")


def test_doctor_with_an_unregistered_runtime_fails_on_the_container_too() -> None:
    result = fnrun("doctor", "--runtime", "kata", env={"DOCKER_HOST": ""})
    assert result.code == 1, result
    [line] = container_line(result.stdout)
    assert line.startswith("FAIL container") and "'kata' is not registered" in line


@pytest.fixture(scope="module")
def default_podman(test_images: None) -> Iterator[dict[str, str]]:
    """A podman service with its default OCI runtime, holding the identity image."""
    root = Path(tempfile.mkdtemp(prefix="fnrun-podman-crun-"))
    try:
        for host in podman_service(root, runtime=None):
            copy_images(docker.DockerClient(base_url=host, timeout=300), [IDENTITY])
            yield {"DOCKER_HOST": host}
    finally:
        shutil.rmtree(root, ignore_errors=True)


@pytest.mark.skipif(not HYBRID, reason="crun starts containers where cgroups are not hybrid")
def test_podman_with_crun_on_hybrid_cgroups_is_explained(tmp_path: Path, default_podman: dict[str, str]) -> None:
    doctor = fnrun("doctor", env=default_podman)
    assert doctor.code == 1, doctor
    [line] = container_line(doctor.stdout)
    assert line.startswith("FAIL container no function container can run here") and "hybrid cgroup layout" in line
    assert "fix: use runc" in line and "podman --runtime runc system service" in line

    package = write_package(tmp_path / "pkg", {"a.yaml": CONFIGMAP})
    before = snapshot(package)
    run = fnrun("run", str(package), "--image", IDENTITY, env=default_podman)
    assert_one_line_error(run, f"function {IDENTITY}: the container engine cannot start it", "hybrid cgroup layout", "fix: use runc", code=4)
    assert snapshot(package) == before

    refused = fnrun("run", str(package), "--image", IDENTITY, "--runtime", "runc", env=default_podman)
    assert_one_line_error(refused, f"function {IDENTITY}: --runtime runc cannot apply", "(crun)", "podman --runtime runc system service", code=4)
    assert snapshot(package) == before
    assert docker.DockerClient(base_url=default_podman["DOCKER_HOST"]).containers.list(all=True) == []


def test_podman_started_with_runc_passes_doctor_and_runs(tmp_path: Path, test_images: None) -> None:
    root = Path(tempfile.mkdtemp(prefix="fnrun-podman-runc-"))
    try:
        for host in podman_service(root, runtime="runc"):
            copy_images(docker.DockerClient(base_url=host, timeout=300), [IDENTITY])
            env = {"DOCKER_HOST": host}
            doctor = fnrun("doctor", "--runtime", "runc", env=env)
            assert doctor.code == 0, doctor
            assert container_line(doctor.stdout)[0].startswith("ok   container a function container ran")
            package = write_package(tmp_path / "pkg", {"a.yaml": CONFIGMAP})
            assert fnrun("run", str(package), "--image", IDENTITY, "--runtime", "runc", env=env).code == 0
    finally:
        shutil.rmtree(root, ignore_errors=True)
