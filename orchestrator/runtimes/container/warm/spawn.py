"""The next warm call's process, started before its turn.

A cold run overlaps each function's own start (an interpreter, its imports) with the steps
before it: its container is started ahead and the function waits on stdin. A warm container
serves one call at a time, so the same overlap needs the next call's process started in another
idle container of its image (or in the one the last call gave back) while the current call runs.
That is what this does, one call ahead: /local set, the helper's clean-up done, the function
started and blocked on its stdin. When the call's turn comes, it is fed its input; its timeout
counts from then, as for a pre-started cold container. A started call whose turn never comes
(its step failed before it, the cache answered it, its step ran before it was ready) is let go
with its container, which no other call may use while that call's helper may still run.
"""

from __future__ import annotations

import threading

import docker.errors
import requests.exceptions

from orchestrator.runtimes.container.warm.calls import NotClean, Started, begin
from orchestrator.runtimes.container.warm.plan import Planned
from orchestrator.runtimes.container.warm.pool import Turn, WarmPool
from orchestrator.runtimes.protocol import Invocation


class Spawner:
    """Starts the first upcoming warm call (by step key, in run order) that is not started yet."""

    def __init__(self, pool: WarmPool, steps: list[tuple[int, Planned]]) -> None:
        self.pool = pool
        self._steps = [(key, step.invocation, step.plan) for key, step in steps if step.fits]
        self._undone = {key: step.plan.key for key, step in steps if step.fits}  # steps yet to end, and their containers' key
        self._started: dict[int, Started] = {}
        self._lock = threading.Condition()
        self._closed = False
        self._spawning: int | None = None  # the step whose call is being started

    def claim(self, key: int, invocation: Invocation, turn: Turn | None = None) -> Started | None:
        """The started call for step `key`, if it is this very invocation; the next one starts.
        `turn` (the pool's count of this call as wanting a container) ends when it has one here,
        before the next call is started: until then no later call takes the slot it needs."""
        with self._lock:
            while self._spawning == key:  # being started right now: it is this call's, wait for it
                self._lock.wait(0.05)
            self._steps = [step for step in self._steps if step[0] != key]
            started = self._started.pop(key, None)
        if started is not None and started.inv != invocation:
            self._let_go(started)
            started = None
        if started is not None and turn is not None:
            turn.have()
        self.kick()
        return started

    def forget(self, key: int) -> None:
        """Step `key` will not run here (done, cached or skipped): the containers its image's
        remaining steps cannot use go (WarmPool.trim)."""
        with self._lock:
            self._steps = [step for step in self._steps if step[0] != key]
            started = self._started.pop(key, None)
            ended = self._undone.pop(key, None)
            needed = sum(1 for other in self._undone.values() if other == ended)
        if started is not None:
            self._let_go(started)
        if ended is not None:
            self.pool.trim(ended, needed)

    def kick(self) -> None:
        """Start the next call in the background, if it is not started yet."""
        self.pool.background(self._next)

    def _next(self) -> None:
        with self._lock:
            if self._closed or self._started or not self._steps:  # one call ahead is enough
                return
            key, invocation, plan = self._steps[0]
            self._spawning = key
        started = None
        try:
            warm = self.pool.take(plan)
            if warm is None:
                return
            try:
                started = begin(self.pool.engine.api(), warm, plan, invocation)
            except (NotClean, docker.errors.APIError, requests.exceptions.RequestException, OSError):
                self.pool.discard(warm)  # the call's own turn gets another container, or runs cold
                return
            with self._lock:
                if not self._closed and any(step[0] == key for step in self._steps):
                    self._started[key], started = started, None
        finally:
            with self._lock:
                self._spawning = None
                self._lock.notify_all()
            if started is not None:
                self._let_go(started)

    def _let_go(self, started: Started) -> None:
        """The container goes with it: its helper is in that call, waiting for its stdin."""
        self.pool.discard(started.warm)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            leftover, self._started = list(self._started.values()), {}
        for started in leftover:
            self.pool.discard(started.warm)
