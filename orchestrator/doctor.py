"""`fnrun doctor`: what the container engine fnrun would use offers, and what will not hold there.

One screen, each line a finding; a problem carries its fix. Nothing is run or changed: the engine
is asked /version and /info, and each of the package's images is looked up.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlparse

from docker.constants import MINIMUM_DOCKER_API_VERSION

from orchestrator.errors import FnrunError

DEFAULT_HOST = "unix:///var/run/docker.sock"
LOCAL_NAMES = {"", "localhost", "127.0.0.1", "::1"}


@dataclass(frozen=True)
class Finding:
    topic: str
    text: str
    fix: str | None = None  # set: this is a problem

    @property
    def problem(self) -> bool:
        return self.fix is not None


def diagnose(images: list[str], oci_runtime: str | None = None) -> list[Finding]:
    from orchestrator.runtimes.container import api_client

    host = os.environ.get("DOCKER_HOST") or DEFAULT_HOST
    try:
        api = api_client()
        version, info = api.version(), api.info()
    except FnrunError as err:
        return [Finding("engine", str(err),
                        "start dockerd (or `podman system service --time 0 unix://SOCKET`) and point DOCKER_HOST at it")]
    except Exception as err:  # noqa: BLE001 - an engine that answers ping but not /info: still a finding
        return [Finding("engine", f"the engine at {host} does not answer /version or /info: {err}", "check the engine's log")]
    findings = [_engine(host, version), Finding("api", f"{api.api_version} (fnrun needs {MINIMUM_DOCKER_API_VERSION} or later)")]
    findings.append(_rootless(info))
    findings += _runtimes(info, oci_runtime)
    findings += _sandbox(host, info)
    findings += [_image(api, image) for image in images]
    return findings


def _engine(host: str, version: dict) -> Finding:
    names = [c.get("Name", "") for c in version.get("Components") or []]
    product = "Podman" if any("podman" in n.lower() for n in names) else "Docker Engine"
    return Finding("engine", f"{product} {version.get('Version', '?')} at {host} ({'remote' if _remote(host) else 'local'})")


def _remote(host: str) -> bool:
    url = urlparse(host)
    return url.scheme not in ("unix", "npipe") and (url.hostname or "") not in LOCAL_NAMES


def _rootless(info: dict) -> Finding:
    if any("rootless" in str(o) for o in info.get("SecurityOptions") or []):
        return Finding("rootless", "yes: the engine runs as an unprivileged user (a container's root is not the host's)")
    return Finding("rootless", "no: the engine runs as root (functions still run as user 65534 with no capabilities)")


def _runtimes(info: dict, wanted: str | None) -> list[Finding]:
    offered = sorted(info.get("Runtimes") or {})
    default = info.get("DefaultRuntime") or "?"
    findings = [Finding("runtimes", f"{', '.join(offered) or 'none listed'} (default: {default})")]
    if wanted and wanted not in offered:
        findings.append(Finding("runtimes", f"--runtime/FNRUN_RUNTIME {wanted!r} is not offered by this engine",
                                f"register it with the engine (dockerd --add-runtime {wanted}=PATH) or pick one of: {', '.join(offered)}"))
    return findings


def _sandbox(host: str, info: dict) -> list[Finding]:
    findings = []
    limits = {"MemoryLimit": "--memory", "PidsLimit": "--pids-limit", "CpuCfsQuota": "--cpus"}
    for key, flag in limits.items():
        if info.get(key) is False:
            findings.append(Finding("sandbox", f"{flag} will not hold: the engine has no {key} support",
                                    "enable the cgroup controller for it in the kernel (and restart the engine)"))
    if not any("seccomp" in str(o) for o in info.get("SecurityOptions") or []):
        findings.append(Finding("sandbox", "no seccomp filter: functions can make any system call",
                                "use an engine built with seccomp, or --runtime runsc where gVisor is registered"))
    scheme = urlparse(host).scheme
    if scheme in ("ssh", "https") or os.environ.get("DOCKER_TLS_VERIFY"):
        findings.append(Finding("sandbox", f"fnrun cannot end a function's stdin over a {scheme or 'TLS'} connection",
                                "reach the engine through a unix socket or plain tcp (e.g. `ssh -L /tmp/d.sock:/var/run/docker.sock HOST`)"))
    if _remote(host):
        findings.append(Finding("sandbox", "/local and --mount are bind mounts of paths on the engine's machine, not this one",
                                "run fnrun on the engine's machine, or keep the package at the same path there"))
    if not findings:
        findings.append(Finding("sandbox", "memory, pids and CPU limits, seccomp, no network, read-only root: all hold"))
    return findings


def _image(api, image: str) -> Finding:
    import docker.errors

    try:
        api.inspect_image(image)
        return Finding("image", f"{image} present")
    except docker.errors.ImageNotFound:
        return Finding("image", f"{image} is not present",
                       f"`docker pull {image}` (fnrun pulls it on the first run under --image-pull-policy ifNotPresent)")


def render(findings: list[Finding]) -> str:
    lines = []
    for finding in findings:
        lines.append(f"{'FAIL' if finding.problem else 'ok':<5}{finding.topic:<10}{finding.text}")
        if finding.fix:
            lines.append(f"{'':<15}fix: {finding.fix}")
    problems = sum(f.problem for f in findings)
    lines.append(f"{problems} problem{'s' if problems != 1 else ''}" if problems else "no problems")
    return "\n".join(lines) + "\n"
