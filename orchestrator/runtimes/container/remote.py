"""Where the container engine is, and whether its bind mounts can see this machine's files.

A bind mount names a path on the engine's machine. With an engine on another machine (DOCKER_HOST
`tcp://` to a host that is not this one, or `ssh://`), the package's directories are not there,
so /local and --mount sources are uploaded into the container instead (orchestrator.runtimes.container.upload).
`ssh://` counts as remote even to 127.0.0.1: that is how VMs (lima, colima, vagrant) forward their
engine. A user overrides the guess with --mounts bind|upload (FNRUN_MOUNTS).
"""

from __future__ import annotations

import os
from urllib.parse import urlparse

from orchestrator.errors import EnvironmentProblem
from orchestrator.runtimes.container import engine_choice

LOOPBACK_NAMES = {"", "localhost", "127.0.0.1", "::1"}
MOUNT_MODES = ("auto", "bind", "upload")


def unix_socket() -> str | None:
    """The socket path when the engine is reached on a local unix socket (the default, or
    DOCKER_HOST=unix://..., podman's under KRM_FN_RUNTIME=podman), else None (also when the
    runtime variable names no engine fnrun can drive: connecting says so)."""
    try:
        host = engine_choice.host()
    except EnvironmentProblem:
        return None
    if host.startswith("unix://"):
        return host[len("unix://"):]
    return None


def engine_host() -> str:
    """The engine fnrun talks to: DOCKER_HOST, else KRM_FN_RUNTIME's (orchestrator.runtimes.container.engine_choice)."""
    return engine_choice.host()


def transport(host: str) -> str:
    """unix | tcp | tls | ssh | npipe: how requests (and a function's stdin and stdout) travel."""
    scheme = urlparse(host).scheme or "unix"
    if scheme in ("tcp", "http", "https"):
        tls = os.environ.get("DOCKER_TLS_VERIFY") or os.environ.get("DOCKER_CERT_PATH")  # the SDK's rule
        return "tls" if scheme == "https" or tls else "tcp"
    return scheme


def is_remote(host: str) -> bool:
    """Whether the engine's bind mounts name paths on another machine than this one."""
    url = urlparse(host)
    if url.scheme == "ssh":
        return True
    return url.scheme not in ("unix", "npipe", "fd", "") and (url.hostname or "") not in LOOPBACK_NAMES


def uploads(mode: str, host: str | None = None) -> bool:
    """Whether /local and mounts are copied in (True) or bind-mounted (False) under `mode`."""
    if mode != "auto":
        return mode == "upload"
    return is_remote(engine_host() if host is None else host)
