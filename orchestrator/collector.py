"""The cyclic garbage collector, which is the whole process's: one owner pauses it for a run.

Reading, decoding and writing a big package builds millions of small acyclic objects (plain YAML
values), and a full collection every few thousand allocations would triple its time. So each
entry point of the library that walks a package (the `api` functions, the lock's inventory) holds
`paused()` once for the whole of its work; the stages never touch the collector. The first
holder notes whether the collector was on and switches it off; the last to leave puts back what
the first found, so holders nested or in other threads (two runs at once in one process) never
switch it on under each other, and a process that had switched it off keeps it off.
"""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Iterator

_lock = threading.Lock()
_holders = 0
_was_enabled = False


@contextlib.contextmanager
def paused() -> Iterator[None]:
    """The collector off while this is held; as it was before the first holder once the last leaves."""
    global _holders, _was_enabled
    with _lock:
        if _holders == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _holders += 1
    try:
        yield
    finally:
        with _lock:
            _holders -= 1
            if _holders == 0 and _was_enabled:
                gc.enable()
