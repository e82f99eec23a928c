"""Extra container engines the tests start themselves, each on its own socket under a temp dir.

The machine's own Docker engine is shared and never touched: an engine started here has its own
storage, state and socket, gets the few images a test needs copied from the main engine (save →
load through the SDK), and is stopped when the test session ends.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import re
import shutil
import signal
import subprocess
import time
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

import docker
import pytest

from .processes import gone_within


def wait_for_ping(url: str, process: subprocess.Popen, log: Path, timeout: float = 60.0) -> docker.DockerClient:
    """A client for the engine at url once it answers; skips (with its log) if it cannot start."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if process.poll() is not None:
            pytest.skip(f"the engine could not start here: {_tail(log)}")
        try:
            client = docker.DockerClient(base_url=url, timeout=120)
            client.ping()
            return client
        except (docker.errors.DockerException, OSError):
            time.sleep(0.2)
    pytest.skip(f"the engine did not answer within {timeout:g}s: {_tail(log)}")


def _tail(log: Path) -> str:
    try:
        lines = log.read_text(errors="replace").strip().splitlines()
    except OSError:
        return "(no log)"
    return " | ".join(lines[-3:]) or "(empty log)"


def stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def copy_images(target: docker.DockerClient, tags: Iterable[str]) -> None:
    """Copy images from the main engine into target in one archive (shared layers sent once)."""
    source = docker.from_env(timeout=300).api
    response = source._get(source._url("/images/get"), params={"names": list(tags)}, stream=True)
    source._raise_for_status(response)
    for _ in target.api.load_image(response.iter_content(1 << 20)):  # the high-level load trips on podman
        pass


def serve(argv: list[str], socket_path: Path, log: Path) -> Iterator[str]:
    """Run an engine (argv) until the caller is done with it; yields its DOCKER_HOST."""
    with log.open("wb") as out:
        process = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
    try:
        wait_for_ping(f"unix://{socket_path}", process, log)
        yield f"unix://{socket_path}"
    finally:
        stop(process)


def podman_service(root: Path, runtime: str | None = "runc") -> Iterator[str]:
    """`podman system service` on root/podman.sock, its storage under root: yields DOCKER_HOST.
    `runtime` None leaves podman's own default (crun on Debian)."""
    podman = shutil.which("podman")
    if podman is None:
        pytest.skip("podman is not installed (.ci/setup installs it)")
    socket_path = root / "podman.sock"
    log = root / "podman.log"
    argv = [
        podman, "--root", str(root / "storage"), "--runroot", str(root / "run"), "--tmpdir", str(root / "tmp"),
        "--storage-driver", "vfs",  # works on any filesystem, also inside an overlay
        "--cgroup-manager", "cgroupfs", "--events-backend", "file",
    ]
    if runtime and shutil.which(runtime):
        argv += ["--runtime", runtime]  # Debian's crun refuses hybrid cgroup hierarchies
    argv += ["system", "service", "--time", "0", f"unix://{socket_path}"]
    yield from serve(argv, socket_path, log)


def dockerd_service(root: Path, runtimes: dict[str, dict], extra: Sequence[str] = (), hide: Path | None = None) -> Iterator[str]:
    """A second dockerd on root/docker.sock (own data, exec root, containerd namespace, bridge; no
    iptables): yields DOCKER_HOST. Its config file lives in root; the machine's is never read.

    `extra`: more dockerd arguments (another -H listener, TLS). `hide`: a directory this dockerd
    sees empty (a tmpfs over it in a mount namespace of its own), as an engine on another machine
    would: a bind mount of anything under it fails there."""
    dockerd = shutil.which("dockerd") or next((p for p in ("/usr/sbin/dockerd", "/usr/bin/dockerd") if Path(p).exists()), None)
    if dockerd is None:
        pytest.skip("dockerd is not installed")
    config = root / "daemon.json"
    config.write_text(json.dumps({"runtimes": runtimes}))
    socket_path = root / "docker.sock"
    log = root / "dockerd.log"
    namespace = "fnrun-test-" + re.sub(r"[^A-Za-z0-9]+", "x", root.name)  # containerd's rule: no "_" at the end
    with own_bridge() as bridge:
        argv = [
            dockerd, "--config-file", str(config), "--data-root", str(root / "data"), "--exec-root", str(root / "exec"),
            "--pidfile", str(root / "docker.pid"), "-H", f"unix://{socket_path}",
            "--bridge", bridge, "--iptables=false", "--ip6tables=false", "--ip-masq=false",
            "--containerd-namespace", namespace, "--containerd-plugins-namespace", f"{namespace}-plugins",
            *extra,
        ]
        if hide is not None:
            unshare = shutil.which("unshare")
            if unshare is None:
                pytest.skip("no `unshare` to give the second dockerd a mount namespace (util-linux)")
            script = 'mount -t tmpfs -o size=1m fnrun-hidden "$0" && exec "$@"'
            argv = [unshare, "--mount", "--propagation", "private", "sh", "-c", script, str(hide), *argv]
        host_bridge = Path("/sys/class/net/docker0")
        had_docker0 = host_bridge.exists()
        yield from serve(argv, socket_path, log)
        if had_docker0 and not host_bridge.exists():
            pytest.fail("the second dockerd deleted the host's docker0: the machine's engine needs it back")


_bridges = itertools.count()


@contextlib.contextmanager
def own_bridge() -> Iterator[str]:
    """A bridge interface of this test's own for a second dockerd.

    Never `--bridge none`: a dockerd started with it deletes the host's docker0, which the
    machine's engine needs (moby's removeDefaultBridgeInterface). Its default would take docker0."""
    ip = shutil.which("ip")
    if ip is None:
        pytest.skip("no `ip` command to make a bridge for a second dockerd (iproute2)")
    n = next(_bridges)  # two engines in one test session each get their own
    name, subnet = f"fnrt{os.getpid() % 100000}{n}", f"10.{253 - n % 50}.{os.getpid() % 250}.1/24"
    made = subprocess.run([ip, "link", "add", name, "type", "bridge"], capture_output=True, text=True)
    if made.returncode != 0:
        pytest.skip(f"cannot make a bridge for a second dockerd: {made.stderr.strip()}")
    try:
        subprocess.run([ip, "addr", "add", subnet, "dev", name], check=True, capture_output=True)
        subprocess.run([ip, "link", "set", name, "up"], check=True, capture_output=True)
        yield name
    finally:
        subprocess.run([ip, "link", "del", name], capture_output=True)


def kill_engine(root: Path) -> None:
    """SIGKILL the engine's whole process group (dockerd and the containerd it started), as an
    engine dies: nothing of it removes a container on the way out."""
    pid = int((root / "docker.pid").read_text())
    os.killpg(os.getpgid(pid), signal.SIGKILL)
    gone_within(pid, 30)


def unmount_left(root: Path) -> None:
    """The killed engine's mounts under its root (its data directory, bound onto itself), which no
    orderly stop took down."""
    for line in reversed(Path("/proc/self/mounts").read_text().splitlines()):
        target = line.split()[1]
        if target == str(root) or target.startswith(f"{root}/"):
            subprocess.run(["umount", "--lazy", target], capture_output=True)
