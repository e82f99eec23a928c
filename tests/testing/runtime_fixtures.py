"""Shared helpers for the runtime tests: real images, real containers, and a leak check.

The functions these tests need are tiny Python scripts run with `python3 -c` in the project's
base image, so no image has to be built for most tests; the few images that must exist as such
(for pushing to a registry, or the registry itself) are built here through the SDK, offline.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import docker
import pytest

from orchestrator.runtimes.container.runtime import api_client
from orchestrator.runtimes.container.settings import LABEL_PID

REPO = Path(__file__).resolve().parents[2]
BASE_IMAGE = os.environ.get("FNRUN_BASE_IMAGE", "fnrun/python-base:bookworm")
REGISTRY_IMAGES = ("fnrun-test/registry:v1", "fnrun-rt-test/registry:v1")

# Reports what the sandbox looks like from inside, as JSON on stdout.
PROBE = r"""
import json, os, sys
def status(key):
    for line in open("/proc/self/status"):
        if line.startswith(key + ":"):
            return line.split()[1]
def writable(directory):
    try:
        path = os.path.join(directory, ".fnrun-probe")
        open(path, "w").close()
        os.remove(path)
        return True
    except OSError:
        return False
def read(path):
    try:
        return open(path).read().strip()
    except OSError:
        return None
sys.stdin.buffer.read()
print(json.dumps({
    "uid": os.getuid(), "gid": os.getgid(),
    "no_new_privs": status("NoNewPrivs"), "cap_eff": status("CapEff"),
    "interfaces": sorted(l.split(":")[0].strip() for l in open("/proc/net/dev").readlines()[2:]),
    "root_writable": writable("/"), "tmp_writable": writable("/tmp"),
    "local_writable": writable("/local") if os.path.isdir("/local") else None,
    "local": sorted(os.listdir("/local")) if os.path.isdir("/local") else None,
    "env": dict(os.environ),
    "memory_limit": read("/sys/fs/cgroup/memory/memory.limit_in_bytes") or read("/sys/fs/cgroup/memory.max"),
    "pids_max": read("/sys/fs/cgroup/pids/pids.max") or read("/sys/fs/cgroup/pids.max"),
}))
"""

IDENTITY = ("cat",)


def python(script: str) -> tuple[str, ...]:
    return ("python3", "-c", script)


def api() -> docker.APIClient:
    return api_client()


def require_base_image() -> str:
    try:
        api().inspect_image(BASE_IMAGE)
    except docker.errors.ImageNotFound:
        pytest.fail(f"{BASE_IMAGE} is missing: build the project's images first (scripts/build_images.py)")
    return BASE_IMAGE


def project_image(name: str) -> str:
    """`fnrun-test/<name>:v1` from tests/images/<name>, built by the project's script if missing."""
    tag = f"fnrun-test/{name}:v1"
    try:
        api().inspect_image(tag)
        return tag
    except docker.errors.ImageNotFound:
        pass
    build = subprocess.run(
        [sys.executable, "scripts/build_images.py", "--only", name], cwd=REPO, capture_output=True, text=True
    )
    if build.returncode != 0:
        pytest.fail(f"cannot build {tag}: {build.stderr.strip()[-500:]}")
    return tag


def containers_of(pid: int) -> list[dict]:
    """Every container (running or not) a given fnrun process started."""
    return api().containers(all=True, filters={"label": f"{LABEL_PID}={pid}"})


def build_image(tag: str, dockerfile: str, files: dict[str, bytes] | None = None) -> str:
    """Build `tag` from an in-memory context on top of the local base image (no registry needed)."""
    context = io.BytesIO()
    with tarfile.open(fileobj=context, mode="w") as tar:
        for name, data in {"Dockerfile": dockerfile.encode(), **(files or {})}.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mode = 0o755
            tar.addfile(info, io.BytesIO(data))
    context.seek(0)
    events = api().build(
        fileobj=context,
        custom_context=True,
        tag=tag,
        buildargs={"BASE_IMAGE": require_base_image()},
        rm=True,
        forcerm=True,
        decode=True,
    )
    for event in events:
        if "error" in event:
            raise RuntimeError(f"building {tag}: {event['error']}")
    return tag


def registry_image() -> str:
    """The project's registry test image, or an equivalent built from the host's docker-registry."""
    for tag in REGISTRY_IMAGES:
        try:
            api().inspect_image(tag)
            return tag
        except docker.errors.ImageNotFound:
            pass
    binary = Path("/usr/bin/docker-registry")
    if not binary.exists():
        pytest.fail("no registry image and no /usr/bin/docker-registry (apt-get install docker-registry)")
    config = b"version: 0.1\nstorage:\n  filesystem:\n    rootdirectory: /var/lib/registry\n"
    config += b"  delete:\n    enabled: true\nhttp:\n  addr: :5000\n"
    dockerfile = (
        "ARG BASE_IMAGE\nFROM ${BASE_IMAGE}\nCOPY docker-registry /usr/bin/docker-registry\n"
        "COPY config.yml /etc/docker/registry/config.yml\nEXPOSE 5000\n"
        'ENTRYPOINT ["/usr/bin/docker-registry", "serve", "/etc/docker/registry/config.yml"]\n'
    )
    return build_image(REGISTRY_IMAGES[-1], dockerfile, {"docker-registry": binary.read_bytes(), "config.yml": config})


def wait_for(predicate, timeout: float = 30.0, interval: float = 0.1) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(interval)
    return False


def run_counting_containers(env: dict[str, str], *args: str) -> tuple[subprocess.CompletedProcess[str], list[dict]]:
    """`fnrun ARGS --results-format json`, and the containers that process created (engine events)."""
    since = time.time() - 1
    process = subprocess.Popen(
        [sys.executable, "-m", "orchestrator", args[0], "--results-format", "json", *args[1:]],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO, env={**os.environ, **env},
    )
    out, err = process.communicate(timeout=120)
    until = time.time() + 1
    created = list(api().events(since=int(since), until=int(until) + 1, decode=True,
                                filters={"event": "create", "label": f"fnrun.pid={process.pid}"}))
    return subprocess.CompletedProcess(process.args, process.returncode, out, err), created
