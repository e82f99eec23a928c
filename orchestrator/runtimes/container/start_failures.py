"""Why an engine could not start a function container, and what fixes it.

Engines pass the OCI runtime's own words through (crun, runc, runsc, podman's conmon); those say
what broke on the host, not what to do. One table maps them to the fix, for `fnrun run`/`render`
(the error line) and `fnrun doctor` (its sandbox probe) alike. Matching is by plain substrings of
the lowered message: linear, and an unknown message simply stays the engine's own.
"""

from __future__ import annotations

from dataclasses import dataclass

from orchestrator.errors import EnvironmentProblem


@dataclass(frozen=True)
class Known:
    needles: tuple[str, ...]  # all must appear in the lowered engine message
    what: str
    fix: str


_RUNC_PODMAN = ('for Docker, `--runtime runc`; for podman, start its service as `podman --runtime runc system '
                'service ...` or set runtime = "runc" under [engine] in containers.conf')

KNOWN = (
    Known(("hybrid mode not supported",), "the OCI runtime crun cannot start containers on this host's hybrid "
          "cgroup layout", f"use runc: {_RUNC_PODMAN}"),
    # crun's `setrlimit ...: Operation not permitted`, podman's `error setting rlimit type 7`
    Known(("rlimit", "not permitted"), "the engine asks for resource limits above this host's hard limits",
          "lower the engine's default ulimits (podman: default_ulimits in containers.conf) or raise the host's"),
    Known(("cgroup", "controller", "not available"), "the engine cannot use a cgroup controller fnrun's limits "
          "need (a rootless engine without delegated controllers?)", "delegate the memory, pids and cpu controllers "
          "to the engine's user (systemd: Delegate=yes), or run as root"),
    Known(("cannot set", "limit"), "the engine cannot apply fnrun's resource limits on this host",
          "enable the cgroup controllers for memory, pids and cpu (a rootless engine needs them delegated)"),
    Known(("unable to find user",), "the image has no such user", "add user nobody (65534) to the image, or "
          "pass --as-current-user"),
    Known(("exec format error",), "the image is built for another CPU architecture", "build or pull the image "
          "for this machine's architecture"),
    Known(("unknown or invalid runtime",), "the OCI runtime is not registered with the engine",
          "register it (dockerd --add-runtime NAME=PATH) or pick one the engine offers with --runtime"),
    Known(("executable file not found",), "the image's entrypoint cannot be found in it", "check the image's "
          "ENTRYPOINT/CMD"),
)


def explain(message: str) -> Known | None:
    lowered = message.lower()
    for known in KNOWN:
        if all(needle in lowered for needle in known.needles):
            return known
    return None


class StartRefused(EnvironmentProblem):
    """The engine cannot start a function container here, for a reason whose fix is known (exit 4):
    said as `WHAT; fix: FIX`, and `fnrun doctor` shows the two apart."""

    def __str__(self) -> str:
        return f"{self.what}; fix: {self.fix}"


def start_failure(name: str, message: str) -> StartRefused | None:
    """One line naming the function, what went wrong on the host and its fix; None when the
    message is not one of those known."""
    known = explain(message)
    if known is None:
        return None
    return StartRefused(f"function {name}: the container engine cannot start it: {known.what} "
                        f"(engine: {_gist(message)})", fix=known.fix)


def podman_runtime_refusal(name: str, wanted: str, default: str) -> StartRefused:
    """Podman's APIs, compatible and its own, ignore a container's runtime and use the service's."""
    return StartRefused(f"function {name}: --runtime {wanted} cannot apply: podman runs every container with its "
                        f"service's runtime ({default})", fix=f"start the service as `podman --runtime {wanted} system "
                        f"service ...` or set runtime = \"{wanted}\" under [engine] in containers.conf, and drop --runtime")


def _gist(message: str) -> str:
    line = " ".join(message.strip().split())
    return line if len(line) <= 160 else line[:157] + "..."
