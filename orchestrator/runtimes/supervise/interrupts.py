"""Ctrl-C and SIGTERM must never leave a container or a process group behind.

While a function runs, a stop raises at once (SIGTERM unwinds like Ctrl-C), so the runtime's
`finally` kills and removes what it started. Everywhere else in a guard, above all while a
container or a process is being created or removed, a stop waits and is raised at the next safe
point: otherwise it could leave a container whose id we never learned, or one half removed.
This is the runtimes' view of the one stop mechanism, orchestrator.stops (which holds the handler).
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from types import TracebackType

from orchestrator import stops


class SignalGuard:
    """One runtime's or one run's supervision (main thread only; elsewhere only `armed()` acts,
    raising a stop noted earlier). Inside it a stop waits (`stops.held`); `armed()` lets one raise
    at once (a held one raises on entry); `held()` makes one wait again until the block is done,
    raised on leaving into `armed()` or when the guard ends (see stops.held for which error wins)."""

    def __init__(self) -> None:
        self._block: AbstractContextManager[stops.Hold] | None = None

    def __enter__(self) -> SignalGuard:
        self._block = stops.held()
        self._block.__enter__()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> bool | None:
        assert self._block is not None
        block, self._block = self._block, None
        return block.__exit__(exc_type, exc, tb)

    armed = staticmethod(stops.armed)
    held = staticmethod(stops.held)
