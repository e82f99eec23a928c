"""/proc/PID/stat, read one way: whether a process still runs, its parent and process group, its
CPU time, when it started.

The command name in parentheses may itself hold spaces and parentheses, so the fields are taken
after the last `)`. Linux only; elsewhere every reading is None (and there are no processes to
list) and callers fall back."""

from __future__ import annotations

import os
from dataclasses import dataclass


@dataclass(frozen=True)
class ProcStat:
    state: str  # R running, S sleeping, Z zombie (ended, not yet reaped), ...
    ppid: int  # the parent now: a process whose parent ended is re-parented (to init or a subreaper)
    pgrp: int  # the process group, which a signal to the group (killpg) reaches
    cpu_ticks: int  # user + system time, in clock ticks
    started: str  # clock ticks from boot to the start: tells a reused pid from the process it was


def read(pid: int | str) -> ProcStat | None:
    """The process's stat line, or None when there is no such process (or no /proc)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            fields = handle.read().rsplit(b")", 1)[1].split()
        return ProcStat(
            state=fields[0].decode(), ppid=int(fields[1]), pgrp=int(fields[2]),
            cpu_ticks=int(fields[11]) + int(fields[12]), started=fields[19].decode(),
        )
    except (OSError, IndexError, ValueError):
        return None


def processes() -> dict[int, ProcStat]:
    """Every process /proc lists now, by pid; one that ends while they are read is left out."""
    try:
        entries = os.listdir("/proc")
    except OSError:
        return {}
    found = {}
    for entry in entries:
        if entry.isdigit() and (stat := read(entry)) is not None:
            found[int(entry)] = stat
    return found


def running(stat: ProcStat | None) -> bool:
    """There, and not a zombie: a zombie has ended and only waits for its parent to reap it."""
    return stat is not None and stat.state != "Z"
