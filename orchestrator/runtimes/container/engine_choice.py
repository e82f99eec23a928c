"""Which container engine fnrun talks to: DOCKER_HOST when set, else the one kpt's variables name.

kpt users pick their engine with KRM_FN_RUNTIME (KPT_FN_RUNTIME before kpt renamed it): docker,
podman or nerdctl. fnrun speaks the Docker Engine API only, which podman serves on its own socket
(`podman system service`, or the podman.socket unit): rootful at /run/podman/podman.sock, rootless
at $XDG_RUNTIME_DIR/podman/podman.sock. nerdctl has no such API, so asking for it is one line and
exit 4 rather than a run that silently talks to whatever Docker socket there is. DOCKER_HOST, when
set, names the socket outright and wins; the run then says so, since the variable is not obeyed."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path

from ...errors import EnvironmentProblem

DEFAULT_HOST = "unix:///var/run/docker.sock"
RUNTIME_VARIABLES = ("KRM_FN_RUNTIME", "KPT_FN_RUNTIME")  # the first set wins, as kpt reads them
ROOTFUL_PODMAN = "/run/podman/podman.sock"
RUNTIMES = ("docker", "podman", "nerdctl")


@dataclass(frozen=True)
class Choice:
    """The engine's address (None: the SDK's default socket) and, when a variable chose it, the note
    that says which engine the run uses."""

    host: str | None
    note: str | None = None


def chosen(environ: dict[str, str] | os._Environ[str] | None = None) -> Choice:
    """DOCKER_HOST, else the engine KRM_FN_RUNTIME/KPT_FN_RUNTIME names (docker by default)."""
    env = os.environ if environ is None else environ
    variable, runtime = _requested(env)
    docker_host = (env.get("DOCKER_HOST") or "").strip()
    if docker_host:
        if runtime not in (None, "docker"):
            return Choice(docker_host, f"DOCKER_HOST={docker_host} wins over {variable}={runtime}: using that engine")
        return Choice(docker_host)
    if runtime in (None, "docker"):
        return Choice(None)
    if runtime == "podman":
        socket = _podman_socket(env, variable or "")
        return Choice(f"unix://{socket}", f"{variable}=podman: using podman's socket {socket}")
    if runtime == "nerdctl":
        raise EnvironmentProblem(f"{variable}=nerdctl: fnrun drives engines through the Docker Engine API, which nerdctl does not serve; use docker or podman (or set DOCKER_HOST)")
    raise EnvironmentProblem(f"{variable}={runtime!r}: not a container runtime fnrun knows; use {' or '.join(RUNTIMES[:2])} (kpt's nerdctl has no Docker Engine API)")


def host(environ: dict[str, str] | os._Environ[str] | None = None) -> str:
    """The engine's address as a URL (the default socket spelled out)."""
    return chosen(environ).host or DEFAULT_HOST


def requested_runtime(environ: dict[str, str] | os._Environ[str]) -> str:
    """The engine kpt's variables ask for (docker when none does), lowercased."""
    return _requested(environ)[1] or "docker"


def announce(choice: Choice) -> None:
    """Say once, on stderr, which engine a runtime variable led to."""
    if choice.note is not None:
        print(f"fnrun: {choice.note}", file=sys.stderr)


def _requested(env: dict[str, str] | os._Environ[str]) -> tuple[str | None, str | None]:
    for variable in RUNTIME_VARIABLES:
        value = (env.get(variable) or "").strip()
        if value:
            return variable, value.lower()
    return None, None


def _podman_socket(env: dict[str, str] | os._Environ[str], variable: str) -> str:
    """Podman's API socket: the rootful one first for root, the user's own first otherwise."""
    runtime_dir = env.get("XDG_RUNTIME_DIR") or f"/run/user/{os.getuid()}"
    rootless = str(Path(runtime_dir) / "podman" / "podman.sock")
    candidates = [ROOTFUL_PODMAN, rootless] if os.getuid() == 0 else [rootless, ROOTFUL_PODMAN]
    for candidate in candidates:
        if Path(candidate).exists():
            return candidate
    raise EnvironmentProblem(
        f"{variable}=podman: no podman API socket at {' or '.join(candidates)}; start one "
        "(`systemctl --user start podman.socket`, or `podman system service --time 0`) or set DOCKER_HOST"
    )
