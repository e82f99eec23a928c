"""No test leaves a thread behind in the pytest process.

A thread that outlives its test changes every later one: fnrun's host fork server forks only a
single-threaded process (orchestrator/runtimes/host/forked.py), so after it the library takes its
other path, and a test of the fork server fails or passes depending on what ran before. Threads
are counted as the kernel counts them (/proc/self/task), so a runtime's own threads (the Go
runtime that starlark-go's import starts) count too, and named by their Python thread when they
have one, else by the kernel's name for them.

A thread started while a fixture wider than a test was set up (module, session) belongs to that
fixture: it may live until the fixture is torn down, and not after."""

from __future__ import annotations

import os
import sys
import threading
import time
from dataclasses import dataclass, field

#: How long a thread that was told to end may take to be gone.
GRACE = 5.0
#: The kernel's names of gRPC's C-core threads (its timer, event engine and lifeguard): started at
#: its first channel or server in a process and kept until the process ends, by design, with no
#: way to end them; the serve tests use gRPC in the pytest process, so the first of them starts them.
GRPC_THREADS = ("grpc", "event_engine", "lifeguard")


def tasks() -> set[int]:
    """The kernel's ids of this process's threads."""
    try:
        return {int(name) for name in os.listdir("/proc/self/task")}
    except OSError:
        return {thread.native_id for thread in threading.enumerate() if thread.native_id is not None}


def _native_name(tid: int) -> str:
    """The kernel's name of a thread Python's threading did not start ("" for one it did)."""
    if any(thread.native_id == tid for thread in threading.enumerate()):
        return ""
    try:
        with open(f"/proc/self/task/{tid}/comm") as comm:
            return comm.read().strip()
    except OSError:
        return ""


def describe(tid: int) -> str:
    """A thread by its Python name and target, or, for a thread Python did not start, the kernel's name."""
    for thread in threading.enumerate():
        if thread.native_id == tid:
            target = getattr(thread, "_target", None)
            where = f" running {getattr(target, '__module__', '?')}.{getattr(target, '__qualname__', target)}" if target else ""
            return f"thread {thread.name!r}{where}"
    try:
        with open(f"/proc/self/task/{tid}/comm") as comm:
            name = comm.read().strip()
    except OSError:
        name = "?"
    return f"thread {tid} ({name!r}, not started by Python's threading: a native library's)"


@dataclass
class ThreadGuard:
    """Which threads each test and each wide fixture started, and which of them are left."""

    #: thread id -> the wide fixture (name, its definition) whose set-up started it
    owned: dict[int, tuple[str, object]] = field(default_factory=dict)

    def fixture_started(self, before: set[int], name: str, definition: object) -> None:
        for tid in tasks() - before:
            self.owned[tid] = (name, definition)

    def left_behind(self, before: set[int]) -> list[str]:
        """The threads started since `before` and still running, past a grace for those ending,
        except those of a wide fixture still set up; described for the failure."""
        deadline = time.monotonic() + GRACE
        while True:
            left = [tid for tid in sorted(tasks() - before) if not self._allowed(tid)]
            if not left or time.monotonic() > deadline:
                break
            time.sleep(0.02)
        found = [describe(tid) + (f" (started by fixture {self.owned[tid][0]!r})" if tid in self.owned else "") for tid in left]
        for tid in left:
            self.owned.pop(tid, None)  # said once: the next test does not inherit the failure
        return found

    def _allowed(self, tid: int) -> bool:
        owner = self.owned.get(tid)
        if owner is not None and getattr(owner[1], "cached_result", None) is not None:
            return True
        return "grpc" in sys.modules and _native_name(tid).startswith(GRPC_THREADS)
