"""/proc/PID/stat, read one way: whether a process still runs, its CPU time, when it started.

The command name in parentheses may itself hold spaces and parentheses, so the fields are taken
after the last `)`. Linux only; elsewhere every reading is None and callers fall back."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ProcStat:
    state: str  # R running, S sleeping, Z zombie (ended, not yet reaped), ...
    cpu_ticks: int  # user + system time, in clock ticks
    started: str  # clock ticks from boot to the start: tells a reused pid from the process it was


def read(pid: int | str) -> ProcStat | None:
    """The process's stat line, or None when there is no such process (or no /proc)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            fields = handle.read().rsplit(b")", 1)[1].split()
        return ProcStat(fields[0].decode(), int(fields[11]) + int(fields[12]), fields[19].decode())
    except (OSError, IndexError, ValueError):
        return None


def running(stat: ProcStat | None) -> bool:
    """There, and not a zombie: a zombie has ended and only waits for its parent to reap it."""
    return stat is not None and stat.state != "Z"
