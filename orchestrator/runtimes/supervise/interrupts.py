"""Ctrl-C and SIGTERM must never leave a container or a process group behind.

While a function runs, SIGTERM is turned into an exception like Ctrl-C, so the runtime's `finally`
kills and removes what it started. While a container is being created or removed, both signals are
held back and delivered right after: otherwise an interrupt landing mid-request could leave a
container whose id we never learned, or one half removed.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType, TracebackType
from typing import Any

from orchestrator import stops


class SignalGuard:
    """Installs SIGINT/SIGTERM handlers for the life of one run (main thread only, else a no-op).

    `armed()` lets signals raise at once; `held()` records them and raises on leaving, so the
    guarded request always completes. Previous handlers are restored on exit; a signal whose
    handler was SIG_IGN stays ignored.
    """

    def __init__(self) -> None:
        self._active = threading.current_thread() is threading.main_thread()
        self._previous: dict[int, Any] = {}
        self._armed = False
        self._pending: int | None = None

    def __enter__(self) -> SignalGuard:
        if self._active:
            for signum in stops.STOPS:
                previous = signal.getsignal(signum)
                if previous is signal.SIG_IGN:
                    continue
                self._previous[signum] = previous
                signal.signal(signum, self._handle)
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        for signum, previous in self._previous.items():
            signal.signal(signum, previous)
        self._previous.clear()
        if exc_type is None or not issubclass(exc_type, KeyboardInterrupt):
            self._raise_pending()  # a stop asked for wins over an error: it must not be lost

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        stops.note(signum)
        if self._armed:
            self._armed = False  # one exception per run; a second signal during cleanup is held
            raise stops.raised(signum)
        if self._pending is None:
            self._pending = signum

    def _raise_pending(self) -> None:
        if self._pending is not None:
            signum, self._pending = self._pending, None
            raise stops.raised(signum)

    @contextmanager
    def armed(self) -> Iterator[None]:
        """Signals raise immediately inside this block (a held one raises on entry, and so does
        one whose exception the interpreter dropped: orchestrator.stops)."""
        self._raise_pending()
        stops.raise_if_asked()
        self._armed = True
        try:
            yield
        finally:
            self._armed = False

    @contextmanager
    def held(self) -> Iterator[None]:
        """Signals wait until this block is done; a held one raises at the next `armed()` or when
        the guard exits. It replaces an error already unwinding (a function that failed because
        the stop cut it short must not read as a failed run, whose render writes a status); only
        an interrupt already unwinding wins over it."""
        was_armed, self._armed = self._armed, False
        try:
            yield
        finally:
            self._armed = was_armed
