"""The sandbox of a function container, as the Engine API's create request, from the standard
library alone.

The container runtime sends this body through the docker SDK; fnrun's launcher
(orchestrator.launch) sends the very same body over the engine's unix socket before the SDK or
anything else heavy is imported. One builder for both means the container started early is
exactly the one the run would have created: the run adopts it only when the two bodies are equal.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path
from typing import Any

from orchestrator import procstat
from orchestrator.errors import InputError
from orchestrator.option_schema import PULL_POLICIES
from orchestrator.runtimes.protocol import BASE_ENV, Invocation, Sandbox

LABEL_FUNCTION = "fnrun.function"
LABEL_PID = "fnrun.pid"  # lets tests (and a user) find what one fnrun process started
# With fnrun.pid, whose container it is, so that the next fnrun can remove it once that process is
# gone (runtimes.container.orphans): the machine, its boot, and when the process started in it.
LABEL_HOST = "fnrun.host"
LABEL_BOOT = "fnrun.boot"
LABEL_STARTED = "fnrun.started"
LABEL_PRESTARTED = "fnrun.prestarted"  # started ahead of its function's turn (runtimes.container.prestart, launch)
NOBODY = "65534:65534"


def function_env(declared: tuple[str, ...] | list[str], given: tuple[str, ...] | list[str]) -> dict[str, str]:
    """The environment of a function: the KRM protocol's switches, then its declared envs, then
    --env (KEY=VALUE, or KEY to pass this process's value through)."""
    env = dict(BASE_ENV)
    for entry in (*declared, *given):
        key, sep, value = entry.partition("=")
        if sep:
            env[key] = value
        elif key in os.environ:
            env[key] = os.environ[key]
    return env


def create_body(inv: Invocation, copies: dict[str, Path]) -> dict[str, Any]:
    """Validate the invocation and build the create request; nothing reaches the engine yet.
    `copies` become anonymous volumes (filled before start, removed with the container)."""
    sandbox: Sandbox = inv.sandbox
    if sandbox.image_pull_policy not in PULL_POLICIES:
        raise InputError(f"unknown image pull policy {sandbox.image_pull_policy!r}: use {', '.join(PULL_POLICIES)}")
    if inv.network and not sandbox.network:
        raise InputError(f"function {inv.name} declares network: true; pass --network to allow it")
    use_network = sandbox.network and inv.network is not False
    host: dict[str, Any] = {
        "NetworkMode": "default" if use_network else "none",
        "SecurityOpt": ["no-new-privileges"],
        "LogConfig": {"Type": "none", "Config": {}},  # output goes through the attach stream only
    }
    mounts = _mounts(inv, copies)
    if mounts:
        host["Mounts"] = mounts
    if sandbox.read_only_root:
        host["ReadonlyRootfs"] = True
        host["Tmpfs"] = {"/tmp": f"size={sandbox.tmpfs_size}"}
    if sandbox.drop_capabilities:
        host["CapDrop"] = ["ALL"]
    if sandbox.memory:
        host["Memory"] = sandbox.memory
    if sandbox.pids_limit:
        host["PidsLimit"] = sandbox.pids_limit
    limits = {"nofile": sandbox.nofile_limit, "nproc": sandbox.nproc_limit}
    ulimits = [{"Name": name, "Soft": value, "Hard": value} for name, value in limits.items() if value]
    if ulimits:
        host["Ulimits"] = ulimits
    if sandbox.cpus:
        host["NanoCpus"] = int(sandbox.cpus * 1e9)
    if sandbox.oci_runtime:
        host["Runtime"] = sandbox.oci_runtime
    body: dict[str, Any] = {
        "Image": inv.image,
        "User": f"{os.getuid()}:{os.getgid()}" if sandbox.as_current_user else NOBODY,
        # stdin open once: our half-close after the ResourceList is the function's EOF
        "OpenStdin": True, "StdinOnce": True, "AttachStdin": True, "AttachStdout": True, "AttachStderr": True, "Tty": False,
        "Env": [f"{key}={value}" for key, value in inv.env.items()],
        "Labels": {LABEL_FUNCTION: inv.name, **owner_labels()},
        "HostConfig": host,
    }
    if inv.args:
        body["Cmd"] = list(inv.args)
    if copies:
        body["Volumes"] = {target: {} for target in copies}
    return body


def owner_labels() -> dict[str, str]:
    """This process as the owner of a container. A pid alone is reused (the kernel cycles through
    pid_max), and clock ticks since boot repeat at the next boot: pid, start time and boot id
    together name one process for good. Read once per process (a fork reads its own)."""
    global _owner
    pid = str(os.getpid())
    owner = _owner
    if owner.get(LABEL_PID) != pid:
        stat = procstat.read(pid)
        owner = {LABEL_PID: pid, LABEL_HOST: socket.gethostname(), LABEL_BOOT: boot_id(), LABEL_STARTED: stat.started if stat is not None else ""}
        _owner = owner  # one assignment: a thread sees the old labels or the new, never half
    return dict(owner)


def boot_id() -> str:
    """The kernel's id of this boot (empty where there is none to read)."""
    try:
        with open("/proc/sys/kernel/random/boot_id", encoding="ascii") as handle:
            return handle.read().strip()
    except OSError:
        return ""


_owner: dict[str, str] = {}


def _mounts(inv: Invocation, copies: dict[str, Path]) -> list[dict[str, Any]]:
    mounts = []
    if inv.local_dir is not None and "/local" not in copies:
        mounts.append(_bind("/local", existing(inv.local_dir, inv), True))
    root = inv.mount_root.resolve() if inv.mount_root is not None else None
    for mount in inv.mounts:
        source = existing(mount.source, inv)
        if root is not None and not source.is_relative_to(root):
            raise InputError(f"function {inv.name}: mount source {mount.source} is outside {inv.mount_root}")
        if mount.target not in copies:
            mounts.append(_bind(mount.target, source, mount.read_only))
    return mounts


def _bind(target: str, source: Path, read_only: bool) -> dict[str, Any]:
    return {"Target": target, "Source": str(source), "Type": "bind", "ReadOnly": read_only}


def existing(path: Path, inv: Invocation) -> Path:
    resolved = Path(path).resolve()
    if not resolved.exists():
        raise InputError(f"function {inv.name}: mount source {path} does not exist")
    return resolved
