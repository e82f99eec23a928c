"""Whether a process a test started, or found, still runs: one answer for every test.

A zombie has ended (it only waits for its parent to reap it), so it counts as gone: a pid's
signal-0 probe would still find it, and a test waiting on it would wait for its whole deadline."""

from __future__ import annotations

import time

from orchestrator import procstat


def alive(pid: int) -> bool:
    """The process is there and not a zombie."""
    return procstat.running(procstat.read(pid))


def gone_within(pid: int, seconds: float) -> bool:
    """Whether the process is gone (or a zombie) within `seconds`, looked at every 50 ms."""
    deadline = time.monotonic() + seconds
    while alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True
