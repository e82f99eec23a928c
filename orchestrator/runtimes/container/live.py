"""The containers this process has created and not yet removed, so that an interrupted run with
functions in worker threads (orchestrator.run.units) can remove them all from the main thread: a
worker blocked on a container's streams then sees them close and returns. No docker import here:
a run that starts no container never loads the SDK to clean up."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

_live: dict[str, Callable[[str], None]] = {}  # container ID -> how to remove it quietly
_lock = threading.Lock()
_cancelled = threading.Event()
_deferred: list[Callable[[], None]] | None = None  # waits for background removals, left to the launcher
_creating = 0  # create requests under way (creating)
_quiet = threading.Condition(_lock)  # told when the last of those is done


def begin() -> None:
    """A new run: containers may be created again after an earlier run was cancelled."""
    _cancelled.clear()


def cancelled() -> bool:
    """Whether this run is being cancelled (Ctrl-C, SIGTERM): a function failing now was stopped."""
    return _cancelled.is_set()


def refuse_if_cancelled() -> None:
    scope = getattr(_calls, "scope", None)
    if _cancelled.is_set() or (scope is not None and scope.cancelled):
        raise KeyboardInterrupt()


class CallScope:
    """The containers one call uses, among many calls at once (a server's requests): those it
    created and the warm one lent to it. Cancelling the call (its client went away) removes them,
    so the function stops at once, and the call may create none after that."""

    def __init__(self) -> None:
        self._used: dict[str, Callable[[str], None]] = {}
        self._lock = threading.Lock()
        self.cancelled = False
        self._over = False

    def use(self, container_id: str, remove: Callable[[str], None]) -> bool:
        with self._lock:
            if not self._over:
                self._used[container_id] = remove
            return not self.cancelled

    def let_go(self, container_id: str) -> None:
        """The call gave the container back (a warm one serves other calls next)."""
        with self._lock:
            self._used.pop(container_id, None)

    def cancel(self) -> None:
        with self._lock:
            if self._over:
                return
            self.cancelled = True
            doomed = list(self._used.items())
        for container_id, remove in doomed:
            remove(container_id)

    def end(self) -> None:
        with self._lock:
            self._over = True
            self._used.clear()


_calls = threading.local()


@contextmanager
def call_scope() -> Iterator[CallScope]:
    """What this thread's call uses, while the block lasts (see CallScope)."""
    scope = CallScope()
    _calls.scope = scope
    try:
        yield scope
    finally:
        scope.end()
        _calls.scope = None


def lent(container_id: str, remove: Callable[[str], None]) -> None:
    """This thread's call now uses a container it did not create (a warm one); raises KeyboardInterrupt
    when the call was cancelled meanwhile."""
    scope = getattr(_calls, "scope", None)
    if scope is not None and not scope.use(container_id, remove):
        raise KeyboardInterrupt()


def given_back(container_id: str) -> None:
    scope = getattr(_calls, "scope", None)
    if scope is not None:
        scope.let_go(container_id)


def register(container_id: str, remove: Callable[[str], None]) -> bool:
    """Remember a new container and what removes it without raising; False when the run was
    cancelled meanwhile (the caller removes it: the sweep of `cancel_all` may not have seen it)."""
    with _lock:
        _live[container_id] = remove
        wanted = not _cancelled.is_set()
    scope = getattr(_calls, "scope", None)
    if scope is not None:
        wanted = scope.use(container_id, remove) and wanted
    return wanted


def forget(container_id: str) -> None:
    with _lock:
        _live.pop(container_id, None)
    given_back(container_id)


@contextmanager
def creating() -> Iterator[None]:
    """A create request under way, and the removal of what it made if the run is being stopped
    (see `settle`)."""
    global _creating
    with _lock:
        _creating += 1
    try:
        yield
    finally:
        with _lock:
            _creating -= 1
            _quiet.notify_all()


def settle(within: float) -> None:
    """The process is about to end (fnrun's launcher, after every wait): remove what is still live,
    which only a run that lost track of a container leaves, and give creates still under way in
    threads the stop left behind `within` seconds to return and remove what they made."""
    cancel_all()
    with _quiet:
        _quiet.wait_for(lambda: _creating == 0, timeout=within)


def cancel_all() -> None:
    """Refuse new containers and remove every live one; errors are ignored (this runs while a run
    is being stopped)."""
    with _lock:
        _cancelled.set()
        doomed = list(_live.items())
    for container_id, remove in doomed:
        remove(container_id)


def defer_waits() -> None:
    """fnrun's launcher (orchestrator.launch) waits for background removals itself, after the
    package is written and the output printed: removal is then off the command's critical path."""
    global _deferred
    _deferred = []


def wait_later(wait: Callable[[], None]) -> None:
    """Call `wait` (it returns once removals are done) now, or at `finish_waits` when deferred."""
    if _deferred is None:
        wait()
    else:
        _deferred.append(wait)


def at_exit(wait: Callable[[], None]) -> None:
    """Call `wait` at `finish_waits` when waits are deferred (fnrun's launcher); elsewhere the
    process is not about to exit, and nothing waits."""
    if _deferred is not None:
        _deferred.append(wait)


def finish_waits() -> None:
    """Every deferred wait, each once; the process may exit after this."""
    while _deferred:
        _deferred.pop(0)()
