"""The images scripts/build_images.py builds exist and behave: the test functions speak the KRM
protocol as the pipeline tests assume, and the registry image serves the Registry API.

Every check runs a real container through the Docker SDK (never the CLI)."""

from __future__ import annotations

import importlib.util
import os
import socket
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import docker
import docker.errors
import pytest
import yaml

REPO = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("build_images", REPO / "scripts" / "build_images.py")
assert _spec and _spec.loader
build_images = importlib.util.module_from_spec(_spec)
sys.modules["build_images"] = build_images  # dataclasses look their module up there
_spec.loader.exec_module(build_images)

TARGETS = build_images.discover(REPO)
HINT = "run: .venv/bin/python scripts/build_images.py"

CONFIG_MAP = b"""\
apiVersion: config.kubernetes.io/v1
kind: ResourceList
items:
# a comment before the first item
- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: first   # trailing comment
    annotations:
      config.kubernetes.io/path: "a/first.yaml"
  data:
    quoted: 'single'
    text: "caf\xc3\xa9 \xe2\x9c\x93"
- apiVersion: apps/v1
  kind: Deployment
  metadata:
    name: second
  spec:
    replicas: 3
"""


def resource_list(data: dict[str, str] | None = None, items: bytes = CONFIG_MAP) -> bytes:
    """CONFIG_MAP, with a ConfigMap functionConfig holding data when given."""
    if data is None:
        return items
    config = {"functionConfig": {"apiVersion": "v1", "kind": "ConfigMap",
                                 "metadata": {"name": "fn-config"}, "data": data}}
    return items + yaml.safe_dump(config, sort_keys=False).encode()


@pytest.fixture(scope="session")
def client() -> Iterator[docker.DockerClient]:
    """One engine connection for the module (DOCKER_HOST honoured)."""
    engine = docker.from_env(timeout=120)
    yield engine
    engine.close()


def run_function(client: docker.DockerClient, image: str, stdin: bytes,
                 **host_config: Any) -> tuple[int, bytes, bytes]:
    """Run image like a KRM function: stdin attached and closed after the input, user nobody,
    no network; returns (exit code, stdout, stderr)."""
    api = client.api
    container = api.create_container(
        image, user="65534", stdin_open=True,  # docker-py sets StdinOnce with it
        host_config=api.create_host_config(network_mode="none", **host_config))
    try:
        attached = api.attach_socket(container, params={"stdin": 1, "stream": 1})
        raw: socket.socket = getattr(attached, "_sock", attached)
        api.start(container)
        raw.sendall(stdin)
        raw.shutdown(socket.SHUT_WR)
        code = api.wait(container, timeout=120)["StatusCode"]
        attached.close()
        return (code, api.logs(container, stdout=True, stderr=False),
                api.logs(container, stdout=False, stderr=True))
    finally:
        api.remove_container(container, force=True)


def items_of(stdout: bytes) -> list[dict[str, Any]]:
    """The items of a ResourceList on stdout."""
    return yaml.safe_load(stdout)["items"]


@pytest.mark.parametrize("target", TARGETS, ids=[t.tag for t in TARGETS])
def test_every_image_is_built(client: docker.DockerClient, target: Any) -> None:
    try:
        labels = client.images.get(target.tag).labels or {}
    except docker.errors.ImageNotFound:
        pytest.fail(f"{target.tag} is missing; {HINT}")
    assert build_images.HASH_LABEL in labels, f"{target.tag} was not built by build_images"


def test_base_image_exists(client: docker.DockerClient) -> None:
    base = os.environ.get("BASE_IMAGE") or build_images.BASE_TAG
    assert build_images.image_id(client, base) != base, f"{base} is missing; {HINT}"


def test_identity_round_trips_bytes(client: docker.DockerClient) -> None:
    big = CONFIG_MAP + b"".join(
        b"- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: cm-%d\n" % i
        for i in range(20000))
    for payload in (CONFIG_MAP, big):
        code, out, err = run_function(client, "fnrun-test/identity:v1", payload)
        assert (code, err) == (0, b"")
        assert out == payload


def test_label_adds_labels_and_keeps_comments(client: docker.DockerClient) -> None:
    code, out, err = run_function(client, "fnrun-test/label:v1",
                                  resource_list({"team": "core", "tier": "true"}))
    assert code == 0, err
    assert b"label: set 2 label(s) on 2 resource(s)" in err
    for item in items_of(out):
        assert item["metadata"]["labels"] == {"team": "core", "tier": "true"}
    assert b"# a comment before the first item" in out
    assert b"# trailing comment" in out
    assert b"'single'" in out
    assert yaml.safe_load(out)["items"][0]["data"]["text"] == "caf\u00e9 \u2713"


def test_generate_and_delete(client: docker.DockerClient) -> None:
    code, out, _ = run_function(client, "fnrun-test/generate:v1", resource_list({"name": "made"}))
    assert code == 0
    made = items_of(out)[-1]
    assert made["metadata"] == {"name": "made"}
    code, out, _ = run_function(client, "fnrun-test/delete:v1",
                                resource_list({"names": "first, nothing"}))
    assert code == 0
    assert [i["metadata"]["name"] for i in items_of(out)] == ["second"]


def test_fail_garbage_and_sleep(client: docker.DockerClient) -> None:
    code, out, err = run_function(client, "fnrun-test/fail:v1",
                                  resource_list({"exitCode": "3", "message": "boom"}))
    assert (code, out, err) == (3, b"", b"boom\n")
    code, out, _ = run_function(client, "fnrun-test/garbage:v1", CONFIG_MAP)
    assert code == 0
    with pytest.raises(yaml.YAMLError):
        yaml.safe_load(out)
    payload = resource_list({"seconds": "0.2"})
    assert run_function(client, "fnrun-test/sleep:v1", payload)[:2] == (0, payload)


def test_results(client: docker.DockerClient) -> None:
    code, out, _ = run_function(client, "fnrun-test/results:v1", resource_list(
        {"severity": "warning", "message": "look", "count": "2", "path": "spec.replicas",
         "ref": "true"}))
    assert code == 0
    results = yaml.safe_load(out)["results"]
    assert [r["message"] for r in results] == ["look (1/2)", "look (2/2)"]
    assert results[1]["resourceRef"] == {"apiVersion": "apps/v1", "kind": "Deployment",
                                         "name": "second"}
    assert results[0]["severity"] == "warning" and results[0]["field"] == {"path": "spec.replicas"}


def test_probe_reports_the_sandbox(client: docker.DockerClient, tmp_path: Path) -> None:
    tmp_path.chmod(0o755)  # pytest makes it 0700: nobody could not list it
    (tmp_path / "b.yaml").write_text("x: 1\n")
    (tmp_path / "a.yaml").write_text("x: 1\n")
    code, out, err = run_function(
        client, "fnrun-test/probe:v1", resource_list({"envs": "EXTRA"}),
        read_only=True, tmpfs={"/tmp": "size=16m"}, cap_drop=["ALL"],
        security_opt=["no-new-privileges"], mem_limit="256m", pids_limit=64,
        binds={str(tmp_path): {"bind": "/local", "mode": "ro"}})
    assert code == 0, err
    probe = items_of(out)[-1]
    assert probe["metadata"]["name"] == "sandbox-probe"
    assert probe["data"] == probe["data"] | {
        "uid": "65534", "gid": "65534", "noNewPrivs": "1", "capEff": "0000000000000000",
        "interfaces": "lo", "rootWritable": "false", "rootReadOnly": "true",
        "tmpWritable": "true", "tmpFsType": "tmpfs", "localWritable": "false",
        "localListing": "a.yaml,b.yaml", "memoryLimit": str(256 * 2**20), "pidsLimit": "64",
        "env.LOG_TO_STDERR": "<unset>", "env.EXTRA": "<unset>",
    }
    assert all(isinstance(v, str) for v in probe["data"].values())


def test_fnrun_base_carries_fnrun(client: docker.DockerClient) -> None:
    """The launcher finds fnrun's entry point in /opt/fnrun, as user nobody, with no network."""
    script = ("import os, runpy, functions; "
              "assert os.access('/usr/local/bin/fnrun', os.X_OK); "
              "main = runpy.run_path('/usr/local/bin/fnrun', run_name='launcher')['main']; "
              "print(main.__module__, main.__code__.co_filename)")
    out = client.containers.run("fnrun/fnrun-base:v1", ["python3", "-c", script], remove=True,
                                network_mode="none")
    assert out.split() == [b"orchestrator.entry", b"/opt/fnrun/orchestrator/entry.py"]


def test_registry_serves_the_registry_api(client: docker.DockerClient) -> None:
    container = client.containers.run("fnrun-test/registry:v1", detach=True,
                                      ports={"5000/tcp": ("127.0.0.1", None)})
    try:
        container.reload()
        port = container.attrs["NetworkSettings"]["Ports"]["5000/tcp"][0]["HostPort"]
        deadline, status = time.monotonic() + 30, None
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/v2/", timeout=2) as reply:
                    status = reply.status
                    break
            except (urllib.error.URLError, ConnectionError):
                time.sleep(0.2)
        assert status == 200, container.logs()[-2000:]
    finally:
        container.remove(force=True)
