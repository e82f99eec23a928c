"""fnrun against a real podman service (its Docker-compatible API), started by these tests.

Podman 4.3 (Debian bookworm) differs from Docker exactly where functions talk: no StdinOnce
(containers/podman#20267) and an attach stream that may echo piped stdin (#19901), and its default
rlimits exceed what many hosts allow. The same packages must give the same bytes as on Docker.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import docker
import pytest

from testing.engine_fixtures import copy_images, podman_service
from testing.pipeline_helpers import REPO, assert_one_line_error, deployment, fnrun, function_config, load, snapshot, write_package

IMAGES = ("fnrun-test/probe:v1", "fnrun-test/identity:v1", "fnrun-test/fail:v1", "fnrun-test/garbage:v1",
          "fnrun-test/sleep:v1", "fnrun/set-labels:v1", "fnrun-test/sdkprobe:v1")


@pytest.fixture(scope="module")
def podman(probe_image: str) -> Iterator[dict[str, str]]:
    """The environment that points fnrun at a fresh podman service holding IMAGES."""
    root = Path(tempfile.mkdtemp(prefix="fnrun-podman-"))
    try:
        for host in podman_service(root):
            copy_images(docker.DockerClient(base_url=host, timeout=300), IMAGES)
            yield {"DOCKER_HOST": host}
    finally:
        shutil.rmtree(root, ignore_errors=True)


def containers(env: dict[str, str]) -> list:
    return docker.DockerClient(base_url=env["DOCKER_HOST"]).containers.list(all=True)


def test_the_sandbox_holds_under_podman(tmp_path: Path, podman: dict[str, str]) -> None:
    write_package(tmp_path, {"p/fn.yaml": function_config("fnrun-test/probe:v1"), "p/notes.txt": "x\n"})
    result = fnrun("run", str(tmp_path), env=podman)
    assert result.code == 0, result
    probe = load(tmp_path / "p/sandbox-probe_configmap.yaml")["data"]
    assert probe["uid"] == "65534" and probe["noNewPrivs"] == "1" and int(probe["capEff"], 16) == 0
    assert probe["interfaces"] == "lo"
    assert probe["rootWritable"] == "false" and probe["localWritable"] == "false" and probe["tmpWritable"] == "true"
    assert probe["localListing"] == "fn.yaml,notes.txt"
    assert probe["nofile"] == "1024:1024" and probe["nproc"] == "4096:4096"
    assert probe["memoryLimit"] == str(512 << 20) and probe["pidsLimit"] == "256"
    assert containers(podman) == []


def test_a_large_input_goes_through_byte_for_byte(tmp_path: Path, podman: dict[str, str]) -> None:
    """stdin reaches EOF (the function returns) and nothing of it is echoed into stdout."""
    big = "".join(deployment(f"web-{i}", f"deployment {i}") + "---\n" for i in range(3000))
    write_package(tmp_path, {"all.yaml": big})
    result = fnrun("run", str(tmp_path), "--image", "fnrun-test/identity:v1", "--output", "-", env=podman)
    assert result.code == 0, result.stderr
    docker_result = fnrun("run", str(tmp_path), "--image", "fnrun-test/identity:v1", "--output", "-")
    assert result.stdout == docker_result.stdout
    assert result.stdout.count("kind: Deployment") == 3000


def test_a_catalog_sample_renders_as_on_docker(tmp_path: Path, podman: dict[str, str]) -> None:
    on_podman, on_docker = tmp_path / "podman", tmp_path / "docker"
    shutil.copytree(REPO / "samples" / "set-labels", on_podman)
    shutil.copytree(REPO / "samples" / "set-labels", on_docker)
    assert fnrun("run", str(on_docker)).code == 0
    result = fnrun("run", str(on_podman), env=podman)
    assert result.code == 0, result
    assert snapshot(on_podman).keys() == snapshot(on_docker).keys()
    assert {k: v[0] for k, v in snapshot(on_podman).items()} == {k: v[0] for k, v in snapshot(on_docker).items()}


@pytest.mark.parametrize(
    ("image", "data", "needle"),
    [("fnrun-test/fail:v1", {"exitCode": "3"}, "exit code 3"), ("fnrun-test/garbage:v1", None, "invalid output")],
)
def test_a_failing_function_fails_the_run_under_podman(
    tmp_path: Path, podman: dict[str, str], image: str, data: dict | None, needle: str
) -> None:
    write_package(tmp_path, {"deploy.yaml": deployment("web"), "fn.yaml": function_config(image, data)})
    before = snapshot(tmp_path)
    assert_one_line_error(fnrun("run", str(tmp_path), env=podman), image, needle, code=1)
    assert snapshot(tmp_path) == before
    assert containers(podman) == []


def test_a_timeout_kills_and_removes_the_container_under_podman(tmp_path: Path, podman: dict[str, str]) -> None:
    write_package(tmp_path, {"deploy.yaml": deployment("web"), "fn.yaml": function_config("fnrun-test/sleep:v1", {"seconds": "60"})})
    before = snapshot(tmp_path)
    assert_one_line_error(fnrun("run", str(tmp_path), "--timeout", "3", env=podman), "fnrun-test/sleep:v1", "timed out", code=1)
    assert snapshot(tmp_path) == before
    assert containers(podman) == []


def test_a_warm_sdk_call_under_podman_is_forked_and_sees_what_a_fresh_container_sees(tmp_path: Path, podman: dict[str, str]) -> None:
    """An SDK image's calls are forked by its zygote under podman too: a and b leave traces and
    change their zygote's limits, c runs after them in one of the run's warm containers."""
    leave = function_config("fnrun-test/sdkprobe:v1", {"leave": "true", "tamper": "zygote"})
    files = {"a/fn.yaml": leave, "b/fn.yaml": leave, "c/fn.yaml": function_config("fnrun-test/sdkprobe:v1", {"envs": "LEFT_BY_SDKPROBE"})}
    warm, cold = write_package(tmp_path / "warm", files), write_package(tmp_path / "cold", files)
    assert fnrun("run", str(warm), env={**podman, "FNRUN_WARM": "1"}).code == 0
    assert fnrun("run", str(cold), env={**podman, "FNRUN_WARM": "0"}).code == 0
    seen, fresh = (load(root / "c/sdk-probe_configmap.yaml")["data"] for root in (warm, cold))
    assert "functions.sdk.zygote" in seen.pop("parent") and fresh.pop("parent") == "<none>"
    assert seen == fresh
    assert seen["tmpListing"] == "" and seen["strays"] == "0" and seen["env.LEFT_BY_SDKPROBE"] == "<unset>"
    assert containers(podman) == []


def test_doctor_names_podman_and_finds_the_package_images(tmp_path: Path, podman: dict[str, str]) -> None:
    write_package(tmp_path, {"p/fn.yaml": function_config("fnrun-test/probe:v1")})
    result = fnrun("doctor", str(tmp_path), env=podman)
    assert "Podman " in result.stdout and f"at {podman['DOCKER_HOST']} (local)" in result.stdout, result.stdout
    assert "ok   image     fnrun-test/probe:v1 present" in result.stdout


def test_a_warm_call_under_podman_sees_what_a_fresh_container_sees(tmp_path: Path, podman: dict[str, str]) -> None:
    """Three probes of one image: a and b leave traces in the run's warm containers (one holds the
    next call ahead), c runs in one of them."""
    leave = function_config("fnrun-test/probe:v1", {"leave": "true"})
    files = {"a/fn.yaml": leave, "b/fn.yaml": leave, "c/fn.yaml": function_config("fnrun-test/probe:v1"), "c/notes.txt": "x\n"}
    warm, cold = write_package(tmp_path / "warm", files), write_package(tmp_path / "cold", files)
    assert fnrun("run", str(warm), env={**podman, "FNRUN_WARM": "1"}).code == 0
    assert fnrun("run", str(cold), env={**podman, "FNRUN_WARM": "0"}).code == 0
    seen, fresh = (load(root / "c/sandbox-probe_configmap.yaml")["data"] for root in (warm, cold))
    assert seen == fresh
    assert seen["tmpListing"] == "" and seen["strays"] == "0" and seen["localListing"] == "fn.yaml,notes.txt"
    assert load(warm / "a/sandbox-probe_configmap.yaml")["data"]["localListing"] == "fn.yaml"
    assert containers(podman) == []
