"""Big packages on every core: reading 10,000 resources, decoding a function's output of as many,
and writing them back are each seconds of pure-Python libyaml work that one interpreter does on
one core.

Forked workers inherit what the job needs as it is (nothing is pickled on the way in); each does
a contiguous share of the units and sends back only its results. Shares keep the serial order, so
results, and the first error, are what one process gives. Small jobs stay in-process: a fork and
the pickling back cost more than they save below a few thousand resources' worth of work."""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable, Sequence
from typing import TypeVar

from .errors import FnrunError
from .yamlio import fast

MAX_WORKERS = 4
#: Below this many bytes of YAML to parse (~1,500 resources), one process is faster than forking.
MIN_BYTES_TO_SHARE = 2_000_000

T = TypeVar("T")
Job = Callable[[int, int], T]  # the units [start, end) -> their results, in a worker

_job: Callable[[int, int], object] | None = None  # what forked workers inherit
_one_job = threading.Lock()  # units run at once may each share a job; `_job` holds one at a time
_worker_hooks: list[Callable[[], None]] = []  # run in each worker before its share (e.g. clear counters)


def count(weight: int, threshold: int) -> int:
    """How many processes to share `weight` units of work among: 1 below `threshold`, when fork
    does not exist or the machine has one core; `FNRUN_WORKERS` overrides (1 keeps everything
    in-process, e.g. to profile). `FNRUN_WRITE_WORKERS`, its first name, is still read."""
    chosen = os.environ.get("FNRUN_WORKERS") or os.environ.get("FNRUN_WRITE_WORKERS")
    if chosen and chosen.isdigit():
        return max(1, int(chosen))
    if weight < threshold:
        return 1
    import multiprocessing  # only here: its import costs as much as a small package's whole run

    if "fork" not in multiprocessing.get_all_start_methods():
        return 1
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return max(1, min(MAX_WORKERS, cores))


def on_worker_start(hook: Callable[[], None]) -> None:
    """Run `hook` in every worker before it starts its share (module state it must not inherit)."""
    if hook not in _worker_hooks:
        _worker_hooks.append(hook)


def fork_map(job: Job[T], weights: Sequence[int], workers: int) -> list[T]:
    """`job` over contiguous shares of the units (about equal total weight each), in `workers`
    forked processes; the results in share order. With one worker (or one unit) it is just
    `[job(0, len(weights))]`. A user-facing error in a worker is raised here as the same error;
    the cyclic GC is paused while the results are unpickled (they are many small acyclic objects)."""
    if workers <= 1 or len(weights) < 2:
        return [job(0, len(weights))]
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    global _job
    shares = shares_of(weights, workers)
    with _one_job:
        _job = job
        try:
            context = multiprocessing.get_context("fork")
            with fast.gc_paused(), ProcessPoolExecutor(max_workers=len(shares), mp_context=context, initializer=_worker_start) as pool:
                done = list(pool.map(_run_share, shares))
        finally:
            _job = None
    for outcome in done:
        if isinstance(outcome, _Failure):
            raise outcome.error()
    return done  # type: ignore[return-value]


def shares_of(weights: Sequence[int], workers: int) -> list[tuple[int, int]]:
    """Contiguous (start, end) ranges of about equal total weight, at most `workers` of them."""
    total = sum(weights)
    shares, start, acc = [], 0, 0
    for i, weight in enumerate(weights):
        acc += weight
        if acc * workers >= total * (len(shares) + 1) and len(shares) < workers - 1:
            shares.append((start, i + 1))
            start = i + 1
    if start < len(weights):
        shares.append((start, len(weights)))
    return shares


def _worker_start() -> None:
    """Ctrl-C and SIGTERM are the parent's to handle: it stops the pool and cleans up."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    for hook in _worker_hooks:
        hook()


class _Failure:
    """A user-facing error raised in a worker, carried back whole (exit code included)."""

    def __init__(self, err: FnrunError) -> None:
        self.kind, self.message, self.exit_code = type(err), str(err), err.exit_code

    def error(self) -> FnrunError:
        return self.kind(self.message, exit_code=self.exit_code)


def _run_share(share: tuple[int, int]) -> object:
    assert _job is not None, "fork_map sets the job before forking"
    try:
        with fast.gc_paused():
            return _job(*share)
    except FnrunError as err:
        return _Failure(err)
