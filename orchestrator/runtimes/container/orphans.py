"""Containers whose fnrun is gone are removed by the next fnrun that has a container on the same
engine: a process killed outright (SIGKILL, a lost machine) cannot remove its own, and neither can
one whose engine died mid-run (the engine comes back with the container, stopped, still there).

Every container fnrun creates names its owner in labels (settings.owner_labels): the machine
(fnrun.host), its boot (fnrun.boot), the process (fnrun.pid) and when that process started
(fnrun.started, clock ticks since boot). A container of this machine is an orphan when its boot is
over, or its pid is no process now, or a process started at another time (the kernel reuses pids:
pid_max may be 32768, which a test suite goes round in minutes). Containers of other machines
sharing the engine are left alone, and so is any whose owner cannot be told (no /proc): nothing is
removed on a guess. The /local staging directories of gone processes' warm containers
(warm.local) go too. An orphaned warm container nobody sweeps ends itself once idle
(warm.plan.IDLE_TTL), and the next sweep removes it.

The sweep runs once per process, in a thread of its own, from the first connection a run (or a
server) makes to the engine (runtimes.container.runtime.Engine), on that connection: off the run's path;
under fnrun's launcher the exit waits for it (a bounded while), so a short run's sweep is not
cut off.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from orchestrator import procstat
from orchestrator.runtimes.container import live
from orchestrator.runtimes.container.settings import LABEL_BOOT, LABEL_HOST, LABEL_PID, LABEL_STARTED, boot_id

EXIT_WAIT = 10.0  # seconds the exit waits for a sweep still under way (a slow engine: the next run sweeps)

_lock = threading.Lock()
_begun = False


def alive(pid: int, started: str) -> bool:
    """Whether process `pid`, started at `started` (empty: unknown), still runs on this machine.
    Where there is no /proc to ask, every owner counts as alive."""
    if pid <= 0:
        return False
    stat = procstat.read(pid)
    if stat is None or not procstat.running(stat):
        return not Path("/proc/self/stat").exists()
    return not started or stat.started == started


def gone(labels: Mapping[str, str], host: str, boot: str) -> bool:
    """Whether the owner the labels name, on machine `host` in its boot `boot`, is gone."""
    if labels.get(LABEL_HOST) != host:
        return False
    if labels.get(LABEL_BOOT) and boot and labels[LABEL_BOOT] != boot:
        return True  # a boot that is over has no process left
    try:
        pid = int(labels.get(LABEL_PID, ""))
    except ValueError:
        return False
    return not alive(pid, labels.get(LABEL_STARTED, ""))


def sweep(api: Any, remove: Callable[[str], None]) -> int:
    """Remove this machine's orphaned containers (listed through the engine client `api`,
    removed by `remove`) and warm staging directories; how many containers went. Errors leave
    the rest for the next sweep."""
    from orchestrator.runtimes.container.warm import local

    host, boot = socket.gethostname(), boot_id()
    found = api.containers(all=True, filters={"label": [f"{LABEL_HOST}={host}", LABEL_PID]})
    removed = 0
    for entry in found:
        if gone(entry.get("Labels") or {}, host, boot):
            remove(entry["Id"])
            removed += 1
    for path in local.staging_root().glob(f"{local.PREFIX}*"):
        owner = path.name[len(local.PREFIX):].split("-")
        if len(owner) >= 2 and owner[0].isdigit() and not alive(int(owner[0]), owner[1]):
            local.remove(Path(path))
    return removed


def sweep_soon(api: Any, remove: Callable[[str], None]) -> None:
    """The sweep, at most once per process, in the background, through the engine client `api`
    (a run's), removing by `remove`; an engine that does not answer is no reason to fail (the
    next fnrun sweeps again)."""
    global _begun
    with _lock:
        if _begun:
            return
        _begun = True
    thread = threading.Thread(target=_quietly, args=(api, remove), name="fnrun-sweep", daemon=True)
    thread.start()
    live.at_exit(lambda: thread.join(EXIT_WAIT))


def _quietly(api: Any, remove: Callable[[str], None]) -> None:
    try:
        sweep(api, remove)
    except Exception:  # noqa: BLE001 - the next fnrun sweeps again
        pass
