"""What stops the children a run has outside containers, so that an interrupted run can end them
all from the main thread (orchestrator.run.units): a worker thread blocked on a child's pipes then
sees them close and returns. Containers have their own list (orchestrator.runtimes.container.live)."""

from __future__ import annotations

import threading
from collections.abc import Callable

_stoppers: list[Callable[[], None]] = []
_lock = threading.Lock()


def register(stop: Callable[[], None]) -> None:
    """`stop` ends every child of one kind (idempotent, never raises); registered once."""
    with _lock:
        if stop not in _stoppers:
            _stoppers.append(stop)


def unregister(stop: Callable[[], None]) -> None:
    """`stop`'s children are gone for good (their owner ended them): nothing more to stop."""
    with _lock:
        if stop in _stoppers:
            _stoppers.remove(stop)


def stop_all() -> None:
    with _lock:
        stoppers = list(_stoppers)
    for stop in stoppers:
        stop()
