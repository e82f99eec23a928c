"""Warm containers whose fnrun was killed outright (SIGKILL, a lost machine) are found and removed
by the next fnrun that uses warm containers on the same engine.

Every warm container carries its owner in labels: the machine (fnrun.host), the process
(fnrun.pid) and when that process started (fnrun.started, so a reused pid is not taken for it).
One on this machine whose process is gone is an orphan: removed, with its /local staging
directory. Containers of other machines sharing the engine are left alone. An orphan nobody
sweeps ends itself once idle for a while (plan.IDLE_TTL), and is then removed by the next sweep.
"""

from __future__ import annotations

import socket
import threading
from pathlib import Path

from orchestrator.runtimes.container import runtime as container
from orchestrator.runtimes.container.settings import LABEL_PID
from orchestrator.runtimes.container.warm import local
from orchestrator.runtimes.container.warm.plan import LABEL_HOST, LABEL_STARTED, LABEL_WARM, process_started

_swept = threading.Event()


def alive(pid: int, started: str) -> bool:
    """Whether process `pid`, started at `started` (empty: unknown), still runs on this machine.
    Where there is no /proc to ask, every owner counts as alive: nothing is removed on a guess."""
    if pid <= 0:
        return False
    now = process_started(pid)
    if now is None:
        return not Path("/proc/self/stat").exists()
    return not started or now == started


def sweep() -> int:
    """Remove this machine's orphaned warm containers and staging directories; how many
    containers went. Errors leave the rest for the next sweep."""
    api = container.api_client()
    found = api.containers(all=True, filters={"label": [f"{LABEL_WARM}=1", f"{LABEL_HOST}={socket.gethostname()}"]})
    removed = 0
    for entry in found:
        labels = entry.get("Labels") or {}
        try:
            pid = int(labels.get(LABEL_PID, "0"))
        except ValueError:
            pid = 0
        if not alive(pid, labels.get(LABEL_STARTED, "")):
            container.remove_quietly(entry["Id"])
            removed += 1
    for path in local.staging_root().glob(f"{local.PREFIX}*"):
        owner = path.name[len(local.PREFIX):].split("-")
        if len(owner) >= 2 and owner[0].isdigit() and not alive(int(owner[0]), owner[1]):
            local.remove(Path(path))
    return removed


def sweep_once() -> None:
    """The sweep, at most once per process; an engine that does not answer is no reason to fail."""
    if _swept.is_set():
        return
    _swept.set()
    try:
        sweep()
    except Exception:  # noqa: BLE001 - the next fnrun sweeps again
        pass
