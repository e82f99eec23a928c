"""The stops (Ctrl-C, SIGTERM) the fnrun command was asked for, remembered apart from the exception
that carries them.

Why: Python turns a signal into an exception wherever the main thread happens to be, and where
that is a destructor or a weakref callback, the interpreter prints the exception and drops it
("Exception ignored in ..."): the stop is lost, and the run would go on to write the package.
The command's signal handlers note every stop here as well, and the write-back's commit refuses
to land once one was noted (orchestrator.write.journal.signals_held), so a stop always wins.

Only the command line remembers (`remember()`, called by the launcher): a program that calls the
library, catches a KeyboardInterrupt and carries on must not find every later run refused.
"""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

STOPS = (signal.SIGINT, signal.SIGTERM)
_remembering = False
_asked: list[int] = []
_quiet = 0  # inside noted_only(): the command's handlers note, and do not raise


def remember() -> None:
    """From now on this process notes its stops: it is the fnrun command, which runs one command."""
    global _remembering
    _remembering = True


def note(signum: int, frame: FrameType | None = None) -> None:
    """Note a stop (also a signal handler: one that only notes)."""
    if _remembering and not _asked:
        _asked.append(signum)


def note_quietly() -> dict[int, Any]:
    """Remember stops, and until other handlers come, note SIGINT and SIGTERM without raising
    where Python's default handling was in place (an ignored signal stays ignored). Returns the
    handlers found, for the one who installs the real ones to restore."""
    remember()
    found: dict[int, Any] = {signum: signal.getsignal(signum) for signum in STOPS}
    for signum, handler in found.items():
        if handler is signal.SIG_DFL or handler is signal.default_int_handler:
            signal.signal(signum, note)
    return found


@contextmanager
def noted_only() -> Iterator[None]:
    """A block a raised stop would leave half done in a way no cleanup can see (Thread.start()
    cut short leaves a thread running that join() does not know of, and its Condition's lock
    released twice): the command's handlers only note a stop here, and it is raised on leaving."""
    global _quiet
    _quiet += 1
    try:
        yield
    finally:
        _quiet -= 1
    raise_if_asked()


def quiet() -> bool:
    """Whether the command's handlers should only note a stop now (see noted_only)."""
    return _quiet > 0


def asked() -> int | None:
    """The first stop noted, if any."""
    return _asked[0] if _asked else None


class Interrupted(KeyboardInterrupt):
    """SIGTERM (or a held-back SIGINT) arrived while a function ran; behaves like Ctrl-C."""

    def __init__(self, signum: int) -> None:
        super().__init__(f"interrupted by {signal.Signals(signum).name}")
        self.signum = signum


def raised(signum: int) -> KeyboardInterrupt:
    """The exception a stop unwinds as: Ctrl-C's own for SIGINT, Interrupted for SIGTERM."""
    return KeyboardInterrupt() if signum == signal.SIGINT else Interrupted(signum)


def raise_if_asked() -> None:
    """Raise the stop noted earlier, as its handler did."""
    signum = asked()
    if signum is not None:
        raise raised(signum)
