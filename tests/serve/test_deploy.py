"""`fnrun serve` for a cluster: the manifests in deploy/kubernetes agree with the server's own
flags and with each other, and the image of deploy/fnrun-serve.Dockerfile, built here through the
Docker SDK, serves a real call with the engine's socket mounted."""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import docker
import docker.errors
import grpc
import pytest
import yaml

from orchestrator.runtimes.container.remote import unix_socket
from orchestrator.runtimes.remote import wire
from testing.pipeline_helpers import REPO, fnrun

MANIFESTS = REPO / "deploy" / "kubernetes"
DOCKERFILE = REPO / "deploy" / "fnrun-serve.Dockerfile"
TAG = "fnrun-test/fnrun-serve:v1"
IDENTITY = "fnrun-test/identity:v1"

_spec = importlib.util.spec_from_file_location("serve_image", REPO / "scripts" / "serve_image.py")
assert _spec and _spec.loader
serve_image = importlib.util.module_from_spec(_spec)
sys.modules["serve_image"] = serve_image
_spec.loader.exec_module(serve_image)


def documents() -> list[dict[str, Any]]:
    """Every Kubernetes object in deploy/kubernetes, kustomization.yaml aside."""
    found = []
    for path in sorted(MANIFESTS.glob("*.yaml")):
        if path.name != "kustomization.yaml":
            found.extend(doc for doc in yaml.safe_load_all(path.read_text()) if doc is not None)
    return found


def one(kind: str) -> dict[str, Any]:
    [found] = [doc for doc in documents() if doc["kind"] == kind]
    return found


def server_container() -> dict[str, Any]:
    [found] = [c for c in one("Deployment")["spec"]["template"]["spec"]["containers"] if c["name"] == "fnrun-serve"]
    return found


def serve_flags() -> dict[str, bool]:
    """`fnrun serve --help` as the real CLI prints it: each flag, and whether it takes a value."""
    result = fnrun("serve", "--help")
    assert result.code == 0, result.stderr
    flags = {}
    for line in result.stdout.splitlines():
        words = line.split()
        while words and words[0].startswith("-") and not words[0].startswith("--"):
            words = words[1:]  # a short alias: "-h, --help"
        if words and words[0].startswith("--"):
            flags[words[0].rstrip(",")] = len(words) > 1 and words[1].startswith("<")
    assert "--address" in flags and "--insecure" in flags, result.stdout
    return flags


def check_args(args: list[str], flags: dict[str, bool]) -> dict[str, str]:
    """Each of `args` is a flag `fnrun serve` takes, with a value exactly when it wants one."""
    given: dict[str, str] = {}
    words = iter(args)
    for word in words:
        name, eq, value = word.partition("=")
        assert name in flags, f"{name} is not a flag of fnrun serve ({sorted(flags)})"
        if flags[name] and not eq:
            value = next(words)
        assert flags[name] or not eq, f"{name} takes no value"
        given[name] = value
    return given


def dockerfile_cmd() -> list[str]:
    [line] = [line for line in DOCKERFILE.read_text().splitlines() if line.startswith("CMD ")]
    return yaml.safe_load(line[len("CMD "):])  # a JSON array is YAML too


def test_every_manifest_parses_into_named_objects() -> None:
    docs = documents()
    assert {doc["kind"] for doc in docs} == {"Deployment", "Service", "NetworkPolicy"}
    for doc in docs:
        assert doc["apiVersion"] and doc["metadata"]["name"] == "fnrun-serve", doc
    kustomization = yaml.safe_load((MANIFESTS / "kustomization.yaml").read_text())
    assert sorted(kustomization["resources"]) == sorted(p.name for p in MANIFESTS.glob("*.yaml") if p.name != "kustomization.yaml")


def test_the_server_s_args_and_the_image_s_default_are_flags_fnrun_serve_takes() -> None:
    flags = serve_flags()
    check_args(server_container()["args"], flags)
    check_args(dockerfile_cmd(), flags)


def test_probes_container_port_service_and_address_agree() -> None:
    container = server_container()
    address = check_args(container["args"], serve_flags())["--address"]
    port = int(address.rpartition(":")[2])
    assert address.rpartition(":")[0] == "0.0.0.0", "the kubelet and the Service reach the pod's address, not its loopback"
    assert [p["containerPort"] for p in container["ports"]] == [port]
    assert container["readinessProbe"]["grpc"]["port"] == port
    assert container["livenessProbe"]["grpc"]["port"] == port
    service = one("Service")
    assert [(p["port"], p["targetPort"]) for p in service["spec"]["ports"]] == [(9445, port)]
    assert dockerfile_cmd()[dockerfile_cmd().index("--address") + 1] == f"0.0.0.0:{port}"
    assert f"EXPOSE {port}" in DOCKERFILE.read_text()


def test_the_service_and_the_policy_select_the_deployment_s_pods_and_admit_porch_only() -> None:
    """porch-server (--function-runner) and porch-controllers (FUNCTION_RUNNER_ADDRESS), by the labels
    Porch's own deployments give their pods; no namespace selector, so only porch-system's."""
    labels = one("Deployment")["spec"]["template"]["metadata"]["labels"]
    assert one("Deployment")["spec"]["selector"]["matchLabels"].items() <= labels.items()
    assert one("Service")["spec"]["selector"].items() <= labels.items()
    policy = one("NetworkPolicy")["spec"]
    assert policy["podSelector"]["matchLabels"].items() <= labels.items()
    assert policy["policyTypes"] == ["Ingress"]
    [rule] = policy["ingress"]
    assert rule["from"] == [{"podSelector": {"matchLabels": {"app": "porch-server"}}},
                            {"podSelector": {"matchLabels": {"k8s-app": "porch-controllers"}}}]
    assert rule["ports"] == [{"protocol": "TCP", "port": one("Service")["spec"]["ports"][0]["targetPort"]}]


def test_every_container_has_requests_and_limits() -> None:
    spec = one("Deployment")["spec"]["template"]["spec"]
    for container in spec.get("initContainers", []) + spec["containers"]:
        for kind in ("requests", "limits"):
            assert set(container["resources"][kind]) >= {"cpu", "memory"}, (container["name"], kind)


def test_fnrun_runs_as_no_root_on_a_read_only_root() -> None:
    spec = one("Deployment")["spec"]["template"]["spec"]
    for container in spec.get("initContainers", []) + [server_container()]:
        context = container["securityContext"]
        assert context["runAsNonRoot"] and context["runAsUser"] != 0 and context["readOnlyRootFilesystem"], container["name"]
        assert context["allowPrivilegeEscalation"] is False and context["capabilities"]["drop"] == ["ALL"]
    mounted = {m["mountPath"] for m in server_container()["volumeMounts"]}
    assert {"/var/cache/fnrun", "/tmp"} <= mounted, "the cache and temporary files need writable volumes"


def test_the_lock_s_serve_entries_are_found() -> None:
    """The image installs the serve extra's pins from requirements.lock, every one with its hashes."""
    pinned = serve_image.requirements(REPO)
    for name in serve_image.SERVE_PACKAGES:
        entry = serve_image.locked(pinned, (name,))
        assert entry.startswith(f"{name}==") and "--hash=sha256:" in entry, name


@pytest.fixture(scope="module")
def image() -> Iterator[str]:
    """The image, built from deploy/fnrun-serve.Dockerfile under a test tag, removed after."""
    client = docker.from_env(timeout=600)
    try:
        yield serve_image.build_image(client, TAG)
    finally:
        try:
            client.images.remove(TAG, force=True)
        except docker.errors.ImageNotFound:
            pass
        client.close()


@dataclass
class Served:
    """A `fnrun serve` container of the image, and a channel to it."""

    container: Any
    channel: grpc.Channel
    hostname: str
    api: Any  # the engine's low-level client

    def call(self, body: bytes, image: str = IDENTITY) -> Any:
        messages, services = wire.modules()
        return services.FunctionEvaluatorStub(self.channel).EvaluateFunction(
            messages.EvaluateFunctionRequest(resource_list=body, image=image), timeout=300)

    def ours(self, **filters: str) -> list[dict[str, Any]]:
        """The containers this server started (fnrun labels them with its host name)."""
        return self.api.containers(all=True, filters={"label": f"fnrun.host={self.hostname}", **filters})


@contextmanager
def served(image: str, command: list[str] | None = None, environment: dict[str, str] | None = None,
           shared: str | None = None) -> Iterator[Served]:
    """The image run as the Deployment runs it: not root (the engine socket's group added), a
    read-only root with /tmp and the cache on their own volumes, no capabilities, the engine's
    socket mounted, port 9445 published on loopback; `shared`, a directory mounted at the
    same path, as the manifests share the warm helper's with the engine. After the block: stopped
    with SIGTERM, exit 0, no Traceback, and no container of its left (any left are removed)."""
    socket_path = unix_socket()
    if socket_path is None:
        pytest.skip("the engine is not on a local unix socket here: nothing to mount")
    volumes = {socket_path: {"bind": "/var/run/docker.sock", "mode": "rw"}}
    if shared is not None:
        volumes[shared] = {"bind": shared, "mode": "ro"}
    client = docker.from_env(timeout=120)
    container = client.containers.run(image, command=command, environment=environment, detach=True, volumes=volumes,
                                      group_add=[str(os.stat(socket_path).st_gid)], ports={"9445/tcp": ("127.0.0.1", None)},
                                      labels={"fnrun-test": "test_deploy"}, read_only=True, cap_drop=["ALL"],
                                      security_opt=["no-new-privileges"],
                                      tmpfs={"/tmp": "mode=1777", "/var/cache/fnrun": "mode=1777"})
    left: list[dict[str, Any]] = []
    try:
        container.reload()
        port = container.attrs["NetworkSettings"]["Ports"]["9445/tcp"][0]["HostPort"]
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            grpc.channel_ready_future(channel).result(timeout=120)
            running = Served(container, channel, container.attrs["Config"]["Hostname"], client.api)
            yield running
        container.stop(timeout=30)
        logs = container.logs().decode()
        assert container.wait(timeout=60)["StatusCode"] == 0 and "Traceback" not in logs, logs
        left = running.ours()
    finally:
        container.remove(force=True)
        for entry in left:
            client.api.remove_container(entry["Id"], force=True)
        client.close()
    assert left == [], "the server left function containers behind"


BODY = (b"apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n"
        b"- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: %s # kept\n")


def test_the_image_s_defaults_answer_health_and_a_call(image: str, test_images: None) -> None:
    with served(image) as running:
        _, health_messages, health_services = wire.health()
        for service in ("", wire.SERVICE):  # the kubelet's grpc probe asks for ""
            status = health_services.HealthStub(running.channel).Check(health_messages.HealthCheckRequest(service=service), timeout=30).status
            assert status == health_messages.HealthCheckResponse.SERVING, service
        body = BODY % b"from-the-image"
        assert running.call(body).resource_list == body
        logs = running.container.logs().decode()
    assert f"{IDENTITY} " in logs and "exit 0" in logs, logs


def test_with_the_helper_at_a_path_the_engine_sees_one_warm_container_serves_every_call(image: str, test_images: None) -> None:
    """The manifests' arrangement on one machine: the warm helper in a directory the server and the
    engine see at the same path (FNRUN_WARM_HELPER names it)."""
    shared = Path(tempfile.mkdtemp(prefix="fnrun-warm-shared-"))
    try:
        shutil.copy2(serve_image.warm_helper(), shared / "fnrun-warm")
        shared.chmod(0o755)
        (shared / "fnrun-warm").chmod(0o755)
        environment = {"FNRUN_WARM_HELPER": str(shared / "fnrun-warm")}
        with served(image, ["--address", "0.0.0.0:9445", "--insecure", "--no-cache"], environment, str(shared)) as running:
            for n in range(4):
                body = BODY % f"call-{n}".encode()
                assert running.call(body).resource_list == body
            warm = running.ours(status="running")
            assert [(c["Image"], c["Labels"].get("fnrun.warm")) for c in warm] == [(IDENTITY, "1")], warm
    finally:
        shutil.rmtree(shared, ignore_errors=True)
