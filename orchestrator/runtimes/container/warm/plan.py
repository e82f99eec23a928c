"""Whether a call may go to a warm container, and which container serves it.

A warm container is created from the same create request a cold one would be (settings.create_body:
network none, user nobody, no-new-privileges, read-only root, /tmp tmpfs, no capabilities, the
memory, CPU and pids limits, the OCI runtime), minus what differs per call: the environment, the
arguments and /local. Those come with each call (orchestrator.runtimes.container.warm.calls). Its
PID 1 is the helper (warm.helper). /local, when the call has one, is what it would be cold: a
read-only bind mount, here of a directory of the container's own that each call's function-config
directory is linked into (warm.local); or, where the cold path copies /local in (a remote engine,
--mounts upload), an anonymous volume each call's copy is put into. Calls whose create requests are equal but for
those share containers: the request is the key.

What a warm container could not serve exactly as a cold one would goes cold: a writable root
(nothing would empty it), a writable mount (the copy at /local could go stale against it), an
image that declares volumes (a cold container gets them fresh, filled from the image), the
`always` pull policy and an image not present (the cold path pulls and reports).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from orchestrator import procstat
from orchestrator.errors import FnrunError
from orchestrator.runtimes.container import settings
from orchestrator.runtimes.container.inspect import inspect_image
from orchestrator.runtimes.container.remote import uploads
from orchestrator.runtimes.container.settings import LABEL_FUNCTION, LABEL_STARTED, create_body
from orchestrator.runtimes.container.warm.helper import NAME, TARGET, helper_dir
from orchestrator.runtimes.protocol import Invocation, Mount
from orchestrator.settings import HelperPlace

LABEL_WARM = "fnrun.warm"
#: An image label naming a Python module that serves `python3 -m MODULE` calls as a fork server
#: (fnrun's SDK images: functions/sdk/zygote.py; the helper starts it, fnrun-warm.c).
LABEL_ZYGOTE = "dev.fnrun.python-zygote"
IDLE_TTL = 1800  # seconds without a call after which a warm container ends itself (its stream should have ended first; `fnrun serve` expires idle ones after as long, as Porch does)
HELPER = f"{TARGET}/{NAME}"


@dataclass(frozen=True)
class Plan:
    """The warm container a call needs (`key`, `body`, `copies`) and what the call runs in it."""

    key: str
    body: dict[str, Any]
    copies: dict[str, Path]
    base: Invocation  # the call without what is its own: what creates the container
    argv: tuple[str, ...]  # the image's entrypoint and command, or its entrypoint and the call's arguments
    local: str  # none | bind | upload: how /local reaches the container (warm.local)
    zygote: tuple[str, ...] = ()  # the image's Python fork server for argv, if it has one (zygote_for)

    def zygote_for(self, env: dict[str, str]) -> tuple[str, ...]:
        """The zygote a call with `env` may use: none when a variable would change how the
        interpreter starts (PYTHON*, the locale), which a zygote started without it cannot honour."""
        if any(name.startswith(("PYTHON", "LC_")) or name == "LANG" for name in env):
            return ()
        return self.zygote


@dataclass(frozen=True)
class NoWarm:
    """Why a call goes cold instead of to a warm container: `reason` as a message shows it."""

    reason: str


@dataclass(frozen=True)
class Planned:
    """A warm step's call as the run worked it out at its start, with its plan and whether its
    /local is small enough to copy per call (warm.calls.fits): its turn reuses them when its call
    is still this one, rather than inspect the image and walk /local again."""

    invocation: Invocation
    plan: Plan
    fits: bool

    def for_call(self, inv: Invocation) -> Plan | None:
        """The plan, when `inv` is the call it was made for (else the caller plans anew)."""
        return self.plan if inv == self.invocation else None


def plan(inv: Invocation, connect: Callable[[], Any] | None = None, place: HelperPlace = HelperPlace()) -> Plan | NoWarm:
    """The plan for `inv`, or why it goes cold; `connect`: the run's engine client, where the
    image or the engine's architecture must be asked through the SDK; `place`: where the
    warm-call helper is had (the run's settings; the launcher's own reading)."""
    from orchestrator.runtimes.container.upload import copies_of

    sandbox = inv.sandbox
    if inv.image is None:
        return NoWarm("no image")
    if not sandbox.read_only_root:
        return NoWarm("the root is writable (--writable-root)")
    if sandbox.image_pull_policy == "always":
        return NoWarm("image pull policy always")
    if any(not m.read_only for m in inv.mounts):
        return NoWarm("a writable mount")
    config = _image_config(inv.image, connect)
    if config is None:
        return NoWarm("the image is not present")
    if config.get("Volumes"):
        return NoWarm("the image declares volumes")
    args = list(inv.args) if inv.args else list(config.get("Cmd") or [])
    argv = tuple(config.get("Entrypoint") or []) + tuple(args)
    if not argv:
        return NoWarm("the image has no entrypoint or command")
    home, why = helper_dir(connect=connect, place=place)
    if home is None:
        return NoWarm(why)
    base = replace(inv, name=inv.image, env={}, args=(), local_dir=None, mounts=(*inv.mounts, Mount(home, TARGET)), mount_root=None)
    try:
        create_body(inv, {})  # what the cold path would refuse, it refuses itself
        copies = copies_of(base)
        body = create_body(base, copies)
    except FnrunError:
        return NoWarm("the cold path reports the invocation's problem")
    body.update({"Entrypoint": [HELPER, "serve", str(IDLE_TTL)], "Cmd": None, "Env": [], "OpenStdin": True,
                 "StdinOnce": True, "AttachStdin": True, "AttachStdout": True, "AttachStderr": True})
    local = "none"
    if inv.local_dir is not None:
        local = "upload" if "/local" in copies_of(replace(inv, mounts=())) else "bind"
        if local == "upload" and not uploads(sandbox.mount_mode):
            return NoWarm("/local is not readable by the sandbox user (it is copied in, cold)")
        if local == "upload":
            body["Volumes"] = {**body.get("Volumes", {}), "/local": {}}
    key = json.dumps([local, body], sort_keys=True)
    body["Labels"] = {**body["Labels"], LABEL_FUNCTION: inv.image, **owner_labels()}
    return Plan(key, body, copies, base, argv, local, _zygote(config, argv))


def container_body(plan: Plan, staging: Path | None) -> dict[str, Any]:
    """The create request of `plan`'s container: its body, with `staging` bind-mounted read-only
    at /local when the plan binds one (warm.local)."""
    body = dict(plan.body)
    if plan.local == "bind" and staging is not None:
        host = dict(body["HostConfig"])
        host["Mounts"] = [*host.get("Mounts", []), {"Target": "/local", "Source": str(staging), "Type": "bind", "ReadOnly": True}]
        body["HostConfig"] = host
    return body


def staging_owner() -> str:
    """What names this process's staging directories (warm.local): its pid and start."""
    return f"{os.getpid()}-{owner_labels()[LABEL_STARTED]}"


def _zygote(config: dict[str, Any], argv: tuple[str, ...]) -> tuple[str, ...]:
    """The command of the image's fork server for `argv` (`python3 -m MODULE ...`), or ()."""
    labels = config.get("Labels") or {}
    server = labels.get(LABEL_ZYGOTE, "") if isinstance(labels, dict) else ""
    if not server or len(argv) < 3 or argv[1] != "-m" or os.path.basename(argv[0]) not in ("python3", "python"):
        return ()
    return (argv[0], "-m", server, argv[2])


def _image_config(image: str, connect: Callable[[], Any] | None) -> dict[str, Any] | None:
    found = inspect_image(image, connect)
    if found is None:
        return None
    config = found.get("Config") or {}
    return config if isinstance(config, dict) else {}


def owner_labels() -> dict[str, str]:
    """A warm container's labels of its own, with whose it is, as every container fnrun creates
    (settings.owner_labels: the next fnrun removes it once this process is gone)."""
    return {LABEL_WARM: "1", **settings.owner_labels()}


def process_started(pid: int) -> str | None:
    """When process `pid` started (clock ticks since boot, /proc), so a reused pid is not taken
    for the process that created a container; None when there is no such process (or only its
    zombie) or no /proc."""
    stat = procstat.read(pid)
    return stat.started if stat is not None and procstat.running(stat) else None
