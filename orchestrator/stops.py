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

_remembering = False
_asked: list[int] = []


def remember() -> None:
    """From now on this process notes its stops: it is the fnrun command, which runs one command."""
    global _remembering
    _remembering = True


def note(signum: int) -> None:
    if _remembering and not _asked:
        _asked.append(signum)


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
