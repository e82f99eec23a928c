"""The one place fnrun handles its stops (Ctrl-C, SIGTERM): the only signal handler it installs,
the one way to hold a stop and raise it at a safe point, and the stops the command was asked for.

How a stop travels: the handler (`_handle`) notes it, then raises `Interrupted` at once, unless
the main thread is inside a `held()` block, where it waits and is raised when the block is left
into code that may raise (SIGTERM unwinds like Ctrl-C, so every `finally` removes what it started).
Three holders use it: the launcher while it starts a thread (Thread.start() cut short leaves a
thread running that join() does not know of); a run's supervision (orchestrator.runtimes.supervise
.interrupts: held while a container or process is created or removed, raised only inside
`armed()`, while a function runs); and the write-back's commit (orchestrator.write.journal: a
stop waits until every rename landed, and says so).

Why stops are also remembered: Python turns a signal into an exception wherever the main thread
happens to be, and where that is a destructor or a weakref callback, the interpreter prints the
exception and drops it ("Exception ignored in ..."): the stop is lost, and the run would go on to
write the package. Every stop is noted here as well; it is raised again when the next function
is about to run and when the write-back would commit, so a stop always wins. Only the command line
remembers (`remember()`): a program that calls the library, catches a KeyboardInterrupt and
carries on must not find every later run refused.

Handlers are set from the main thread only (Python's rule); elsewhere holding is a no-op. A signal
whose handler was SIG_IGN stays ignored. The serve command takes its stops another way, blocked in
every thread and waited for (`block`, `wait`), since its main thread has nothing else to do.
"""

from __future__ import annotations

import signal
import threading
from contextlib import AbstractContextManager, contextmanager, nullcontext
from types import FrameType

from orchestrator.errors import Interrupted

TYPE_CHECKING = False  # typing's constant without typing (~5 ms of `fnrun --version`); type checkers read it as True
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

    Handlers = dict[int, Any]  # a signal -> its handler before fnrun's (signal.getsignal's values)

STOPS = (signal.SIGINT, signal.SIGTERM)

_remembering = False
_asked: list[int] = []


class Hold:
    """One `held()` or `armed()` block of the main thread, found on the stack by identity.
    `written`: the block's work landed (the write-back's commit), so a stop raised on leaving
    says so. A plain class, not a dataclass: this module loads with the `fnrun` command's first
    instruction, and `dataclasses` would bring `inspect` with it (~10 ms), which `fnrun --version`
    never needs."""

    __slots__ = ("raises", "written", "replaced")

    def __init__(self, raises: bool, written: bool = False) -> None:
        self.raises = raises
        self.written = written
        self.replaced: Handlers = {}  # handlers this block set ours over, restored on leaving


_holds: list[Hold] = []  # the main thread's blocks, innermost last
_pending: list[tuple[int, bool]] = []  # a held stop: (signal, came after a write landed)


def remember() -> None:
    """From now on this process notes its stops: it is the fnrun command, which runs one command."""
    global _remembering
    _remembering = True


def note(signum: int) -> None:
    """Note a stop the command was asked for (the first one counts)."""
    if _remembering and not _asked:
        _asked.append(signum)


def asked() -> int | None:
    """The first stop noted, if any."""
    return _asked[0] if _asked else None


def raise_if_asked() -> None:
    """Raise the stop noted earlier, as its handler did (one the interpreter may have dropped)."""
    signum = asked()
    if signum is not None:
        raise Interrupted(signum)


def _handle(signum: int, frame: FrameType | None) -> None:
    """fnrun's one handler of SIGINT and SIGTERM: note; then raise, or hold inside `held()`."""
    note(signum)
    top = _holds[-1] if _holds else None
    if top is None or top.raises:
        if top is not None:
            top.raises = False  # one exception per armed block: a second stop while it unwinds is held
        raise Interrupted(signum)
    if not _pending:
        _pending.append((signum, False))


def _ours(handler: object) -> bool:
    return handler is _handle


def _is_default(handler: object) -> bool:
    return handler is signal.SIG_DFL or handler is signal.default_int_handler


def start_command() -> Handlers:
    """The fnrun command's first instruction (orchestrator.__main__): from now on stops are noted,
    and held while the launcher loads (no stop is raised mid-import). Returns the handlers found
    before, for `take_over` and `give_back`. Only where Python's default handling was in place."""
    remember()
    found: Handlers = {signum: signal.getsignal(signum) for signum in STOPS}
    _holds.append(Hold(raises=False))
    for signum, handler in found.items():
        if _is_default(handler):
            signal.signal(signum, _handle)
    return found


def take_over(found: Handlers | None) -> Handlers:
    """The launcher's handlers for the rest of the command: a stop raises from now on (one held
    while it loaded was noted, and `raise_if_asked` raises it). `found`: `start_command`'s answer
    (None: the launcher was called without it). Returns the handlers to give back at the end."""
    previous: Handlers = found if found is not None else {signum: signal.getsignal(signum) for signum in STOPS}
    remember()
    _holds.clear()
    _pending.clear()
    for signum, handler in previous.items():
        if _is_default(handler):
            signal.signal(signum, _handle)
    return previous


def ignore() -> None:
    """The command's last steps (removals, the exit) must complete: stops are ignored."""
    for signum in STOPS:
        signal.signal(signum, signal.SIG_IGN)


def give_back(previous: Handlers) -> None:
    """The handlers found before fnrun's (`take_over`)."""
    for signum, handler in previous.items():
        signal.signal(signum, handler)


def _install(hold: Hold) -> None:
    """Our handler for the block's life, where it is not in place (a program calling the library;
    a signal it ignores stays ignored)."""
    for signum in STOPS:
        handler = signal.getsignal(signum)
        if not _ours(handler) and handler is not signal.SIG_IGN and handler is not None:
            hold.replaced[signum] = handler
            signal.signal(signum, _handle)


def held() -> AbstractContextManager[Hold]:
    """A block a stop must not cut short: a stop is noted and waits. On leaving into code that
    raises (outside every hold, or inside `armed()`), the stop is raised: it replaces an error
    already unwinding (a function that failed because the stop cut it short must not read as a
    failed run, whose render writes a status); only an interrupt already unwinding wins over it.
    Left into another hold, the stop waits for that one."""
    if threading.current_thread() is not threading.main_thread():
        return nullcontext(Hold(raises=False))
    return _block(Hold(raises=False))


def armed() -> AbstractContextManager[object]:
    """Inside a hold, a block a stop may cut at once (a function running: its runtime's `finally`
    kills and removes it). A stop held before, or one whose exception the interpreter dropped,
    raises on entry."""
    if threading.current_thread() is not threading.main_thread():
        raise_if_asked()
        return nullcontext()
    return _block(Hold(raises=True))


@contextmanager
def _block(hold: Hold) -> Iterator[Hold]:
    interrupted = False
    try:  # from the first step: a stop while it starts must still find it popped
        _holds.append(hold)
        _install(hold)
        if hold.raises:
            if _pending:
                signum, written = _pending.pop()
                raise Interrupted(signum, written=written)
            raise_if_asked()
        yield hold
    except KeyboardInterrupt:
        interrupted = True
        raise
    finally:
        _leave(hold, interrupted)


def _leave(hold: Hold, interrupted: bool) -> None:
    """Pop `hold`, put back what it replaced, and raise a stop that waited in it where it may."""
    if hold in _holds:
        _holds.remove(hold)
    for signum, handler in hold.replaced.items():
        signal.signal(signum, handler)
    if not _pending:
        return
    if hold.written:
        _pending[0] = (_pending[0][0], True)
    if interrupted:
        _pending.clear()  # a stop is unwinding already
        return
    if _holds and not _holds[-1].raises:
        return  # an outer hold: it waits for that one
    signum, written = _pending.pop()
    raise Interrupted(signum, written=written)


def block() -> None:
    """Block the stops in this thread and every thread it starts from now on (serve: its pool's
    threads must not take them; the main thread `wait`s for them)."""
    signal.pthread_sigmask(signal.SIG_BLOCK, STOPS)


def wait() -> int:
    """The next stop, once `block` made stops wait."""
    return signal.sigwait(STOPS)

