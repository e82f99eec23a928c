"""Big packages on every core: reading 10,000 resources, decoding a function's output of as many,
and writing them back are each seconds of pure-Python libyaml work that one interpreter does on
one core.

Forked workers inherit what the job needs as it is (nothing is pickled on the way in); each does
a contiguous share of the units and sends back only its results. Shares keep the serial order, so
results, and the first error, are what one process gives. Small jobs stay in-process: a fork and
the pickling back cost more than they save below a few thousand resources' worth of work.

A fork while other threads run (the streamed decoder calls this from its thread) can give a child a
lock one of them held; the children run only fnrun's own parsing code, imported before the fork,
but a lock no one will release would hang the child for good. So a child that makes no progress
(no CPU time for `STUCK_AFTER` seconds while asleep) is killed and its share done here instead;
the result is the same either way. `stop_all` ends every child (an interrupted run)."""

from __future__ import annotations

import contextlib
import functools
import os
import pickle
import select
import signal
import threading
from collections.abc import Callable, Sequence
from typing import TypeVar

from . import procstat
from .errors import FnrunError

MAX_WORKERS = 4
#: Below this many bytes of YAML to parse (~1,500 resources), one process is faster than forking.
MIN_BYTES_TO_SHARE = 2_000_000

T = TypeVar("T")
Job = Callable[[int, int], T]  # the units [start, end) -> their results, in a worker

_one_fork = threading.Lock()  # units run at once may each share a job: one set of children at a time
#: Seconds without CPU time, asleep, after which a child counts as stuck on an inherited lock.
STUCK_AFTER = 2.0
_children: set[int] = set()  # every worker child alive, for stop_all


def count(weight: int, threshold: int, chosen: int | None) -> int:
    """How many processes to share `weight` units of work among: 1 below `threshold`, when fork
    does not exist or the machine has one core; `chosen` overrides (FNRUN_WORKERS, read at the
    edge and handed down by each caller: 1 keeps everything in-process, e.g. to profile)."""
    if chosen is not None:
        return chosen
    if weight < threshold:
        return 1
    if not hasattr(os, "fork"):
        return 1
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return max(1, min(MAX_WORKERS, cores))


def fork_map(job: Job[T], weights: Sequence[int], workers: int) -> list[T]:
    """`job` over contiguous shares of the units (about equal total weight each): the first share
    here, each other in a forked child; the results in share order. With one worker (or one unit)
    it is just `[job(0, len(weights))]`. The first user-facing error in share order is raised
    here as the same error. Children are bare forks writing one pickle to a pipe:
    a process pool's queues, threads and extra fork cost ~30 ms a call, and this process would
    sit idle while it worked."""
    if workers <= 1 or len(weights) < 2:
        return [job(0, len(weights))]
    shares = shares_of(weights, workers)
    with _one_fork:
        children: list[tuple[int, int]] = []
        try:
            for share in shares[1:]:
                children.append(_fork(job, share))
            first = _outcome(lambda: job(*shares[0]))
            if isinstance(first, _Failure):
                raise first.error()  # the first in order: the children's work is moot
            results: list[T | _Failure] = [first]
            for share in shares[1:]:
                results.append(_result_of(job, share, *children.pop(0)))
        finally:
            for pid, fd in children:  # an interrupt or a failure here: no child outlives the call
                _stop(pid, fd)
    done: list[T] = []
    for outcome in results:
        if isinstance(outcome, _Failure):
            raise outcome.error()
        done.append(outcome)
    return done


def _fork(job: Job[object], share: tuple[int, int]) -> tuple[int, int]:
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid:
        _children.add(pid)
    if pid == 0:  # the child: never returns
        code = 0
        try:
            os.close(read_end)
            signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C and SIGTERM are the parent's to handle
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            payload = pickle.dumps(_outcome(lambda: job(*share)), protocol=pickle.HIGHEST_PROTOCOL)
            with os.fdopen(write_end, "wb") as out:
                out.write(payload)
        except BaseException:  # noqa: BLE001 - the parent sees a share without a result
            code = 1
        finally:
            os._exit(code)
    os.close(write_end)
    return pid, read_end


def _outcome(run: Callable[[], T]) -> T | _Failure:
    try:
        return run()
    except FnrunError as err:
        return _Failure(err)


def _result_of(job: Job[T], share: tuple[int, int], pid: int, fd: int) -> T | _Failure:
    """The outcome of `share` the child pickled, once it has exited (killed on an interrupt while
    it is read); when it stopped making progress (then it is killed), the share done here."""
    try:
        payload = _read_watched(pid, fd)
    except BaseException:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        raise
    finally:
        os.close(fd)
        _, status = os.waitpid(pid, 0)
        _children.discard(pid)
    if payload is None:
        return _outcome(functools.partial(job, *share))
    if not payload:
        raise FnrunError(f"a worker process stopped without a result ({_how(status)}); nothing was written")
    outcome: T | _Failure = pickle.loads(payload)  # what `_fork`'s child pickled: `job`'s outcome of `share`
    return outcome


def _read_watched(pid: int, fd: int) -> bytes | None:
    """Everything the child writes; None (and the child killed) when it sleeps without CPU time
    for STUCK_AFTER seconds."""
    chunks: list[bytes] = []
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    last, idle = _cpu_and_state(pid), 0.0
    while True:
        if poller.poll(250):
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)
            idle = 0.0
            continue
        now = _cpu_and_state(pid)
        idle = idle + 0.25 if now == last and now[1] != "R" else 0.0
        last = now
        if idle >= STUCK_AFTER:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            return None


def _cpu_and_state(pid: int) -> tuple[int, str]:
    """The child's CPU ticks so far and its state letter (R runs); (0, "?") when unknown."""
    stat = procstat.read(pid)
    return (stat.cpu_ticks, stat.state) if stat is not None else (0, "?")


def stop_all() -> None:
    """Kill every worker child (an interrupted run); each parent's read then ends."""
    for pid in list(_children):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def _how(status: int) -> str:
    if os.WIFSIGNALED(status):
        return f"signal {os.WTERMSIG(status)}"
    return f"exit {os.WEXITSTATUS(status)}" if os.WIFEXITED(status) else "unknown status"


def _stop(pid: int, fd: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, 0)
    _children.discard(pid)
    with contextlib.suppress(OSError):
        os.close(fd)


def shares_of(weights: Sequence[int], workers: int) -> list[tuple[int, int]]:
    """Contiguous (start, end) ranges of about equal total weight, at most `workers` of them."""
    total = sum(weights)
    shares: list[tuple[int, int]] = []
    start, acc = 0, 0
    for i, weight in enumerate(weights):
        acc += weight
        if acc * workers >= total * (len(shares) + 1) and len(shares) < workers - 1:
            shares.append((start, i + 1))
            start = i + 1
    if start < len(weights):
        shares.append((start, len(weights)))
    return shares


class _Failure:
    """A user-facing error raised in a worker, carried back whole (exit code included)."""

    def __init__(self, err: FnrunError) -> None:
        self.kind, self.message, self.exit_code = type(err), str(err), err.exit_code

    def error(self) -> FnrunError:
        return self.kind(self.message, exit_code=self.exit_code)
