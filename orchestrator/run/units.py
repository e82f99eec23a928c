"""Independent work in parallel, with output identical to the serial order.

A run is a list of units in serial order (a render's package pipelines, a `run`'s functions),
each confined to a scope directory. A unit may start once every earlier unit whose scope overlaps
its own has been committed; it then runs on a snapshot of the resources, with its progress events
buffered. Units are committed strictly in serial order: the buffered events are replayed to the
display, and the unit's merges are replayed onto the resources as they are then. Before that, the
commit checks that the resources in the unit's scope are still exactly those it ran on (a
function may have put a resource into a sibling's directory); if not, the unit runs again there,
in the main thread, which is the serial run. So messages, results, reports and the resources
are those of the serial order, whatever the timing.

Signals reach only the main thread, which waits on the workers in short, interruptible waits.
When the run stops (a failure, Ctrl-C, SIGTERM), the workers' shared cancel event is set, every
container this process still has is removed (which ends a worker waiting on its function) and
the workers are joined before the exception goes on.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..events import Events, FunctionReport
from ..merge import scope
from ..resource import Resource
from ..select.functions import FunctionSpec
from ..settings import at_least_one

if TYPE_CHECKING:
    from concurrent.futures import Future, ThreadPoolExecutor

    from ..merge.origin import Changes

#: Seconds an interrupted run waits for its workers once their children are ended.
STOP_WITHIN = 3.0


def default_jobs(chosen: int | None = None) -> int:
    """`chosen` (FNRUN_JOBS, orchestrator.settings), else min(4, CPUs): container start is
    CPU-bound, more threads only queue."""
    return chosen if chosen is not None else max(1, min(4, os.cpu_count() or 1))


def parse_jobs(text: str | int, where: str = "--jobs") -> int:
    return at_least_one(text, where)


class Cancelled(Exception):
    """A worker saw the run stop; its result is never used."""


@dataclass
class Unit:
    scope: str | None  # every step's scope lies in this directory ('' and None: the whole package)
    threadable: bool  # may run in a worker thread (exec functions stay in the main thread)


@dataclass
class Executed:
    """What a unit did, to be committed in serial order."""

    after: list[Resource]  # the resources it ran on, with its merges applied
    trace: list[tuple[FunctionSpec, list[Resource]]] = field(default_factory=list)  # merges to replay
    payload: Any = None  # the caller's: reports, failure


Event = Callable[[Events], None]  # one event, to be told to a listener


class Buffer(Events):
    """Progress events of a worker's unit: held back while earlier units are not committed, then
    (`go_live`, once the unit is next in serial order) shown as they happen, so a display still
    shows the function running; what is left is replayed at the unit's commit. A unit emits
    only a function's events; the run's own (summary, close) are its caller's."""

    def __init__(self) -> None:
        self.calls: list[Event] = []
        self._target: Events | None = None
        self._lock = threading.Lock()

    def _tell(self, event: Event) -> None:
        with self._lock:
            target = self._target
            if target is None:
                self.calls.append(event)
                return
        event(target)

    def planned(self, specs: list[FunctionSpec]) -> None:
        self._tell(lambda to: to.planned(specs))

    def started(self, spec: FunctionSpec) -> None:
        self._tell(lambda to: to.started(spec))

    def stderr(self, spec: FunctionSpec, line: str) -> None:
        self._tell(lambda to: to.stderr(spec, line))

    def transformed(self, spec: FunctionSpec, changes: Changes) -> None:
        self._tell(lambda to: to.transformed(spec, changes))

    def finished(self, spec: FunctionSpec, report: FunctionReport) -> None:
        self._tell(lambda to: to.finished(spec, report))

    @property
    def live(self) -> bool:
        return self._target is not None

    def go_live(self, events: Events) -> None:
        with self._lock:  # held while catching up, so no newer event overtakes the held ones
            self.replay(events)
            self._target = events

    def replay(self, events: Events) -> None:
        calls, self.calls = self.calls, []
        for event in calls:
            event(events)


Execute = Callable[[int, list[Resource], Events, threading.Event], Executed]
Commit = Callable[[int, Executed], None]


def overlap(a: str | None, b: str | None) -> bool:
    if not a or not b:
        return True
    return a == b or a.startswith(b + "/") or b.startswith(a + "/")


def in_unit_scope(directory: str | None, resources: list[Resource]) -> list[Resource]:
    if not directory:
        return resources
    prefix = directory + "/"
    return [r for r in resources if r.path is not None and r.path.startswith(prefix)]


def replay(trace: list[tuple[FunctionSpec, list[Resource]]], resources: list[Resource]) -> list[Resource]:
    for spec, output in trace:
        _, positions = scope.split(spec, resources)
        resources = scope.merge_back(resources, positions, output)
    return resources


def run_units(units: list[Unit], resources: list[Resource], events: Events, execute: Execute, commit: Commit, jobs: int) -> list[Resource]:
    """Run every unit and commit each in order; returns the resources after the last commit.
    `commit` raises to stop the run (later units are then dropped, as the serial run never ran them)."""
    cancel = threading.Event()
    if jobs <= 1 or sum(u.threadable for u in units) < 2:
        for index in range(len(units)):
            done = execute(index, resources, events, cancel)
            resources = done.after
            commit(index, done)
        return resources
    return _Parallel(units, events, execute, commit, jobs, cancel).run(resources)


class _Parallel:
    def __init__(self, units: list[Unit], events: Events, execute: Execute, commit: Commit, jobs: int, cancel: threading.Event) -> None:
        self.units, self.events, self.execute, self.commit, self.jobs, self.cancel = units, events, execute, commit, jobs, cancel
        self.futures: dict[int, Future[tuple[Executed | Exception, Buffer, list[Resource]]]] = {}
        self.started: dict[int, tuple[Buffer, list[Resource]]] = {}  # each launched unit's events and snapshot
        self.committed = 0
        # per launched unit: the snapshot's resources in its scope, and the last resources it was
        # checked against with the verdict (the main thread asks at every short wait)
        self.checked: dict[int, tuple[list[int], list[Resource] | None, bool]] = {}

    def run(self, resources: list[Resource]) -> list[Resource]:
        from concurrent.futures import ThreadPoolExecutor  # here: a run of one unit at a time (most) needs no pool

        pool = ThreadPoolExecutor(max_workers=self.jobs, thread_name_prefix="fnrun-unit")
        try:
            while self.committed < len(self.units):
                self._launch(pool, resources)
                resources = self._next(resources)
            return resources
        finally:
            self._stop(pool)

    def _running(self) -> list[Future]:
        return [f for f in self.futures.values() if not f.done()]

    def _launch(self, pool: ThreadPoolExecutor, resources: list[Resource]) -> None:
        """Start, in serial order, the units whose overlapping predecessors are all committed."""
        free = self.jobs - len(self._running())
        for index in range(self.committed, len(self.units)):
            if free <= 0:
                return
            unit = self.units[index]
            if index in self.futures or not unit.threadable:
                continue
            if any(overlap(self.units[i].scope, unit.scope) for i in range(self.committed, index)):
                continue
            self.started[index] = (Buffer(), resources)
            self.futures[index] = pool.submit(self._work, index, *self.started[index])
            free -= 1

    def _work(self, index: int, buffer: Buffer, snapshot: list[Resource]) -> tuple[Executed | Exception, Buffer, list[Resource]]:
        """Run in a worker; an error is kept, to be raised at the unit's commit (if still valid)."""
        if self.cancel.is_set():
            raise Cancelled()
        try:
            return self.execute(index, snapshot, buffer, self.cancel), buffer, snapshot
        except Cancelled:
            raise
        except Exception as err:  # noqa: BLE001 - FnrunError or a bug: raised in the main thread
            return err, buffer, snapshot

    def _next(self, resources: list[Resource]) -> list[Resource]:
        """Commit the next unit when it is done (or run it here, if it must run in this thread)."""
        from concurrent import futures

        index = self.committed
        future = self.futures.get(index)
        if future is None:
            if self.units[index].threadable:  # waiting for a free worker
                futures.wait(self._running(), timeout=0.1, return_when=futures.FIRST_COMPLETED)
                return resources
            done = self.execute(index, resources, self.events, self.cancel)
        elif not future.done():
            buffer, snapshot = self.started[index]
            if not buffer.live and self._still_valid(index, snapshot, resources):  # next, and committed as is
                buffer.go_live(self.events)
            futures.wait(self._running(), timeout=0.1, return_when=futures.FIRST_COMPLETED)
            return resources
        else:
            del self.futures[index], self.started[index]
            result, buffer, snapshot = future.result()
            valid = self._still_valid(index, snapshot, resources)
            self.checked.pop(index, None)
            if not valid:  # its scope changed under it: run it
                done = self.execute(index, resources, self.events, self.cancel)  # again, as serial would
            else:
                buffer.replay(self.events)
                if isinstance(result, Exception):
                    raise result
                done = result
                if snapshot is not resources:
                    done.after = replay(done.trace, resources)
        self.committed += 1
        self.commit(index, done)
        return done.after

    def _still_valid(self, index: int, snapshot: list[Resource], resources: list[Resource]) -> bool:
        """Whether the resources in the unit's scope are still the very ones it ran on. Asked
        at every wait while the unit is next, and again at its commit: each list of resources
        (never changed in place: a commit makes a new one) is filtered once per unit, not at
        every asking, which made a render of many subpackages quadratic in its resources."""
        if snapshot is resources:
            return True
        directory = self.units[index].scope
        seen = self.checked.get(index)
        if seen is not None and seen[1] is resources:
            return seen[2]
        before = seen[0] if seen is not None else [id(r) for r in in_unit_scope(directory, snapshot)]
        valid = before == [id(r) for r in in_unit_scope(directory, resources)]
        self.checked[index] = (before, resources, valid)
        return valid

    def _stop(self, pool: ThreadPoolExecutor) -> None:
        """Every worker ends before this returns: containers removed and other children ended,
        their streams then close. A worker still busy after STOP_WITHIN seconds (blocked where
        no child of ours can free it) is left to end on its own: a stop must not hang."""
        from concurrent import futures

        self.cancel.set()
        running = self._running()
        if running:
            cancel_containers()
            futures.wait(running, timeout=STOP_WITHIN)
            still = bool(self._running())
            pool.shutdown(wait=not still, cancel_futures=True)
            if not still:
                begin()  # the workers are gone: later runs in this process may create containers
            return
        pool.shutdown(wait=True, cancel_futures=True)


def cancel_containers() -> None:
    """Remove every container this process has, and end every other child it has (forked
    builtins, workers): a worker waiting on one then returns."""
    from .. import workers
    from ..runtimes.container import live
    from ..runtimes.supervise import children

    live.cancel_all()
    children.stop_all()
    workers.stop_all()


def begin() -> None:
    """A new run may create containers again (after an earlier, cancelled run in this process)."""
    from ..runtimes.container import live

    live.begin()
