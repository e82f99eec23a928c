"""The warm containers of one run: started on first need (or ahead), lent to one call at a time,
given back when the call left them clean, discarded otherwise, all removed when the run ends.

Every container is registered with the process's live containers (runtimes.container.live), so
the sweep an interrupted run makes (Ctrl-C, SIGTERM: orchestrator.run.units) removes warm ones
too, and is labelled with its owner (warm.plan.owner_labels) for the next fnrun to find it
should this one be killed outright (runtimes.container.orphans).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from orchestrator.runtimes.container import live, runtime as container
from orchestrator.runtimes.container.early import Adopted
from orchestrator.runtimes.container.prestart import Remover
from orchestrator.runtimes.container.warm.channel import Channel
from orchestrator.runtimes.container.warm.local import make_staging, remove as remove_staging
from orchestrator.runtimes.container.warm.plan import Plan, container_body, staging_owner


@dataclass
class Warm:
    """One started warm container, lent to at most one call at a time."""

    container_id: str
    key: str
    channel: Channel  # the stream its calls go through (warm.channel)
    local: Path | None = None  # whose function-config directory /local holds now
    calls: int = 0
    staging: Path | None = None  # what is bind-mounted at /local (warm.local)
    idle_since: float = 0.0  # time.monotonic() when it was last given back


class WarmPool:
    """At most `per_image` containers per key (or what `limit` set for it); a call waits for one
    to come back rather than start another beyond that (a start costs more CPU than most calls).
    Its containers live on its owner's `engine` (a run's, a server's: its own when none is
    given); `adopt` offers the launcher's early container (Registry.adopt)."""

    def __init__(self, per_image: int = 1, engine: container.Engine | None = None,
                 adopt: Callable[[dict], Adopted | None] | None = None) -> None:
        self.per_image = max(1, per_image)
        self.engine = engine if engine is not None else container.Engine()
        self._adopt_early = adopt
        self._idle: dict[str, list[Warm]] = {}
        self._count: dict[str, int] = {}
        self._cond = threading.Condition()
        self._closed = False
        self._removed = False  # close() has handed the last removals to the remover
        self._expected: list[Plan] = []
        self._pending: dict[str, int] = {}  # containers being started, by key
        self._waiting: dict[str, int] = {}  # calls waiting for one of those
        self._wanting: dict[str, int] = {}  # calls whose turn has come, holding no container yet (Turn)
        self._needed: dict[str, int] = {}  # by key, how many calls may still come (trim), where known
        self._limits: dict[str, int] = {}  # by key, fewer containers than per_image (limit)
        self._remover = Remover(self.engine.remove_quietly, workers=self.per_image)
        self._ahead = ThreadPoolExecutor(max_workers=1, thread_name_prefix="fnrun-warm")
        self.started = 0  # containers started, for tests and reports
        self.served = 0  # calls that ran in a warm container (not cold)

    def limit(self, key: str, count: int) -> None:
        """At most `count` (1 or more, up to per_image) containers for `key`."""
        with self._cond:
            self._limits[key] = max(1, min(count, self.per_image))

    def _cap(self, key: str) -> int:
        return self._limits.get(key, self.per_image)

    def expect(self, plans: list[Plan], paused: bool) -> None:
        """The containers the run will want: started ahead now, or (`paused`: the result cache may
        answer every call) at `resume`, on the first call the cache could not answer."""
        with self._cond:
            self._expected = list(plans)
        if not paused:
            self.resume()

    def resume(self) -> None:
        with self._cond:
            expected, self._expected = self._expected, []
        for plan in expected:
            self.ahead(plan)

    def ahead(self, plan: Plan) -> None:
        """Start `plan`'s container in the background, if none is there or coming yet."""
        with self._cond:
            if self._closed or self._count.get(plan.key, 0):
                return
            self._count[plan.key] = 1
            self._pending[plan.key] = self._pending.get(plan.key, 0) + 1
        try:
            self._ahead.submit(self._start_ahead, plan)
        except RuntimeError:  # closed meanwhile
            self._started(plan.key)
            self._drop_slot(plan.key)

    def _start_ahead(self, plan: Plan) -> None:
        warm = None
        try:
            warm = self._start(plan)
        finally:
            self._started(plan.key, warm)

    def _started(self, key: str, idle: Warm | None = None) -> None:
        """A start is over; what it started (if anything, and nobody holds it yet) is idle."""
        with self._cond:
            self._pending[key] -= 1
            if idle is not None and not self._closed:
                idle.idle_since = time.monotonic()
                self._idle.setdefault(key, []).append(idle)
                idle = None
            self._cond.notify_all()
        if idle is not None:
            self.discard(idle)

    def acquire(self, plan: Plan) -> Warm | None:
        """An idle container for `plan`, one being started for nobody else, a new one, or (the
        pool is closed, or none could start: the cold path will report why) None. Waits in
        short, interruptible steps."""
        key = plan.key
        with self._cond:
            while True:
                if self._closed:
                    return None
                idle = self._idle.get(key)
                if idle:
                    return idle.pop()
                if self._pending.get(key, 0) > self._waiting.get(key, 0):  # one is coming: wait for it
                    self._waiting[key] = self._waiting.get(key, 0) + 1
                    try:
                        self._cond.wait(0.05)
                    finally:
                        self._waiting[key] -= 1
                    continue
                if self._count.get(key, 0) < self._cap(key):
                    self._count[key] = self._count.get(key, 0) + 1
                    self._pending[key] = self._pending.get(key, 0) + 1
                    break
                self._cond.wait(0.05)
        return self._start_counted(plan)

    def turn(self, key: str) -> Turn:
        """A call of `key` whose turn has come and that holds no container yet (see Turn)."""
        return Turn(self, key)

    def _want(self, key: str, change: int) -> None:
        with self._cond:
            self._wanting[key] = self._wanting.get(key, 0) + change
            self._cond.notify_all()

    def take(self, plan: Plan) -> Warm | None:
        """An idle container for `plan` no call whose turn has come wants, else a new one if the
        pool may start one beyond those such calls may need and none is being started; never
        waits for another call to give one back (warm.spawn asks, for a call ahead of its turn)."""
        key = plan.key
        with self._cond:
            if self._closed:
                return None
            wanting = max(self._wanting.get(key, 0), self._waiting.get(key, 0))
            idle = self._idle.get(key)
            if idle and not wanting:  # a call whose turn has come goes first
                return idle.pop()
            if self._pending.get(key, 0) or self._count.get(key, 0) + wanting >= self._cap(key):
                return None  # the slots left are theirs: a call ahead of its turn holding one starves them
            self._count[key] = self._count.get(key, 0) + 1
            self._pending[key] = 1
        return self._start_counted(plan)

    def _start_counted(self, plan: Plan) -> Warm | None:
        """Start a container the caller counted as pending, and uncount it however the start ends."""
        try:
            return self._start(plan)
        finally:
            self._started(plan.key)

    def background(self, work: Callable[[], None]) -> None:
        """Run `work` in the pool's thread (after the starts ahead asked before it)."""
        try:
            self._ahead.submit(work)
        except RuntimeError:  # closed
            pass

    def _start(self, plan: Plan) -> Warm | None:
        adopted = self._adopt(plan)
        if adopted is not None:
            return adopted
        api = self.engine.api()
        staging = None
        try:
            if plan.local == "bind":
                staging = make_staging(staging_owner())
            container_id = container.create(api, container_body(plan, staging))
        except BaseException as err:
            if staging is not None:
                remove_staging(staging)
            self._drop_slot(plan.key)
            if isinstance(err, Exception):  # the call then runs cold, which reports what is wrong
                return None
            raise
        channel = None
        try:
            channel = Channel(container.attach(api, container_id))  # before the start: the helper serves over it
            container.upload(api, container_id, plan.base, plan.copies)
            api.start(container_id)
        except BaseException as err:
            self._drop_slot(plan.key)
            self._remove(container_id, staging, channel)
            if isinstance(err, Exception):
                return None
            raise
        self.started += 1
        return Warm(container_id, plan.key, channel, staging=staging)

    def _adopt(self, plan: Plan) -> Warm | None:
        """The container fnrun's launcher started for this very plan while fnrun was loading
        (runtimes.container.early), if there is one: from here on it is this pool's."""
        adopted = self._adopt_early(plan.body) if self._adopt_early is not None else None
        if adopted is None:
            return None
        warm = Warm(adopted.container_id, plan.key, Channel(container.Attached.over(adopted.socket)), staging=adopted.staging)
        if not live.register(adopted.container_id, self.engine.remove_quietly):  # the run is being cancelled
            self._drop_slot(plan.key)
            self._remove(warm.container_id, warm.staging, warm.channel, now=True)
            return None
        self.started += 1
        return warm

    def _remove(self, container_id: str, staging: Path | None, channel: Channel | None, now: bool = False) -> None:
        if channel is not None:
            channel.close()  # the helper's stdin ends: it kills what runs and exits
        if now:
            self.engine.remove_quietly(container_id)
        else:
            self._remover.put(container_id)
        if staging is not None:
            remove_staging(staging)

    def release(self, warm: Warm) -> None:
        """The call is done and left the container fit for the next one (kept while a call may
        still come for it)."""
        with self._cond:
            if not self._closed and self._count.get(warm.key, 0) <= self._needed.get(warm.key, self._cap(warm.key)):
                warm.idle_since = time.monotonic()
                self._idle.setdefault(warm.key, []).append(warm)
                self._cond.notify_all()
                return
        self.discard(warm)

    def discard(self, warm: Warm) -> None:
        """The container is not fit for another call (or the run is over): it goes."""
        self._drop_slot(warm.key)
        with self._cond:
            late = self._removed
        self._remove(warm.container_id, warm.staging, warm.channel, now=late)  # after close: here, as nothing else will

    def trim(self, key: str, needed: int) -> None:
        """At most `needed` more calls will want `key`'s containers: idle ones beyond that go now,
        and others as they are given back, so their removal overlaps the run's last calls and its
        write rather than follow them. A call that comes after all still gets a container."""
        with self._cond:
            self._needed[key] = needed
            idle = self._idle.get(key, [])
            doomed: list[Warm] = []
            while idle and self._count.get(key, 0) - len(doomed) > needed:
                doomed.append(idle.pop())
        for warm in doomed:
            self.discard(warm)

    def expire(self, idle_for: float) -> int:
        """Remove the containers no call has used for `idle_for` seconds (a server's idle TTL: a
        run's pool lives shorter than that); how many went."""
        cutoff = time.monotonic() - idle_for
        with self._cond:
            doomed = [warm for group in self._idle.values() for warm in group if warm.idle_since <= cutoff]
            for key, group in self._idle.items():
                self._idle[key] = [warm for warm in group if warm.idle_since > cutoff]
        for warm in doomed:
            self.discard(warm)
        return len(doomed)

    def _drop_slot(self, key: str) -> None:
        with self._cond:
            self._count[key] = max(0, self._count.get(key, 0) - 1)
            self._cond.notify_all()

    def close(self) -> None:
        """Remove every idle container and wait for the removals (lent ones go with their calls)."""
        with self._cond:
            self._closed = True
            idle = [warm for group in self._idle.values() for warm in group]
            self._idle.clear()
            self._cond.notify_all()
        self._ahead.shutdown(wait=True, cancel_futures=True)
        with self._cond:  # what the last start ahead gave back meanwhile
            idle += [warm for group in self._idle.values() for warm in group]
            self._idle.clear()
            self._removed = True
        for warm in idle:
            self._remove(warm.container_id, warm.staging, warm.channel)
        self._remover.close()


class Turn:
    """A call's claim on its key's containers from before it asks the spawner (warm.spawn) for its
    started call until it holds a container, and again while it tries another after one failed:
    meanwhile the pool's `take` leaves it the idle containers and the slots it may need. Without
    it the spawner could lend the image's last slot to a later call, whose process then waits for
    its stdin while this call waits for that slot: a hang."""

    def __init__(self, pool: WarmPool, key: str) -> None:
        self.pool = pool
        self.key = key
        self.wants = False
        self.want()

    def want(self) -> None:
        if not self.wants:
            self.wants = True
            self.pool._want(self.key, 1)

    def have(self) -> None:
        if self.wants:
            self.wants = False
            self.pool._want(self.key, -1)

    def __enter__(self) -> Turn:
        return self

    def __exit__(self, *_: object) -> None:
        self.have()
