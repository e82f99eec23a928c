"""Start containers ahead, so their start overlaps reading the package and earlier functions.

A run that knows which container functions come next hands them to a `Prestarter` in run order;
a bounded pool of threads creates, attaches to and starts up to `window` of them ahead, each then
waiting on stdin. When a function's turn comes, `PrestartedRuntime` writes its input to the
waiting container; everything from there (timeout, output cap, exit code) is the container
runtime's own code, and the function's timeout counts from that moment, not from the pre-start.

What a pre-start cannot do the way the serial path would (pull a missing image, report a bad
setting, an engine error, a builtin catalog image) it leaves alone: the function then runs the
ordinary way, which reports exactly what it always did. With the result cache on, nothing is
pre-started until the first cache miss, so an unchanged re-run starts no container at all.
Every container this module started is removed: after its function (in a background remover,
off the critical path), when its function turns out not to run, and by `close()`, which the run
always reaches (success, failure, Ctrl-C, SIGTERM) and which waits for the remover (under fnrun's
launcher, that wait comes after the package is written: orchestrator.launch).
"""

from __future__ import annotations

import queue
import socket
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

import docker.errors
import requests.exceptions

from orchestrator.runtimes.container import live, runtime as container
from orchestrator.runtimes.container.early import Adopted
from orchestrator.runtimes.container.settings import LABEL_PRESTARTED
from orchestrator.runtimes.protocol import Bytes, Invocation, RunOutput, Runtime, StderrSink, StdoutSink
from orchestrator.runtimes.supervise.interrupts import SignalGuard


@dataclass
class Ready:
    """A started container waiting on stdin, with its attach socket open."""

    container_id: str
    attached: container.Attached


class Remover:
    """Removes containers in `workers` background threads (a removal mostly waits on the engine,
    so two overlap); `close()` returns once all are gone."""

    def __init__(self, remove: Callable[[str], None], workers: int = 1) -> None:
        self._remove = remove
        self._queue: queue.Queue[str | None] = queue.Queue()
        self._threads = [threading.Thread(target=self._work, name="fnrun-remover", daemon=True) for _ in range(max(1, workers))]
        for thread in self._threads:
            thread.start()

    def put(self, container_id: str) -> None:
        self._queue.put(container_id)

    def _work(self) -> None:
        while (container_id := self._queue.get()) is not None:
            self._remove(container_id)

    def close(self) -> None:
        """No more containers; returns once all are gone (or, under the launcher, leaves that wait
        to it: orchestrator.runtimes.container.live.wait_later)."""
        for _ in self._threads:
            self._queue.put(None)
        live.wait_later(self._join)

    def _join(self) -> None:
        for thread in self._threads:
            thread.join()


class Prestarter:
    """Pre-starts the planned container functions on the run's `engine`, at most `window` waiting
    at once; `adopt` offers the launcher's early container (Registry.adopt)."""

    def __init__(self, jobs: int, engine: container.Engine, window: int | None = None, paused: bool = False,
                 in_process: Callable[[Invocation], bool] | None = None, probe: Callable[[], bool] | None = None,
                 adopt: Callable[[dict], Adopted | None] | None = None) -> None:
        self.engine = engine
        self._adopt_early = adopt
        self.window = window or max(2, 2 * jobs)
        self._pool = ThreadPoolExecutor(max_workers=max(1, jobs), thread_name_prefix="fnrun-prestart")
        self._lock = threading.Lock()
        self._upcoming: list[tuple[int, Invocation]] = []
        self._reserved: dict[int, Future[Ready | None]] = {}
        self._paused = paused
        self._in_process = in_process  # what runs in-process instead: no container to start for it
        self._closing = threading.Event()
        self._remover = Remover(engine.remove_quietly)
        if paused and probe is not None:  # e.g. "the first function misses the cache": resume at once
            self._pool.submit(self._probe, probe)

    def _probe(self, probe: Callable[[], bool]) -> None:
        try:
            needed = probe()
        except Exception:  # noqa: BLE001 - the function's own turn reports what is wrong
            return
        if needed:
            self.resume()

    def plan(self, upcoming: list[tuple[int, Invocation]]) -> None:
        """The container functions to come, by key, in the order they run."""
        with self._lock:
            self._upcoming.extend(upcoming)
        self._top_up()

    def resume(self) -> None:
        """A cache miss: containers will be needed after all."""
        with self._lock:
            paused, self._paused = self._paused, False
        if paused:
            self._top_up()

    def claim(self, key: int) -> Ready | None:
        """The pre-started container for `key`, or None (never pre-started, or it could not be):
        then the function runs the ordinary way."""
        with self._lock:
            self._upcoming = [(k, inv) for k, inv in self._upcoming if k != key]
            future = self._reserved.pop(key, None)
        self._top_up()
        if future is None:
            return None
        try:
            while True:  # short waits: a signal handler in the main thread runs between them
                try:
                    return future.result(timeout=0.05)
                except TimeoutError:
                    continue
        except BaseException:  # interrupted while waiting: its container must still go
            future.add_done_callback(self._release_result)
            raise

    def discard(self, key: int) -> None:
        """`key` will not run (or has run): its container, if any, is removed unused."""
        with self._lock:
            self._upcoming = [(k, inv) for k, inv in self._upcoming if k != key]
            future = self._reserved.pop(key, None)
        if future is not None:
            future.add_done_callback(self._release_result)
        self._top_up()

    def release(self, ready: Ready) -> None:
        ready.attached.close()
        self._remover.put(ready.container_id)

    def close(self) -> None:
        """Stop pre-starting, remove every container started and not claimed, wait for removals."""
        self._closing.set()
        with self._lock:
            self._upcoming.clear()
            leftover, self._reserved = list(self._reserved.values()), {}
        self._pool.shutdown(wait=True, cancel_futures=True)
        for future in leftover:
            if not future.cancelled():
                self._release_result(future)
        self._remover.close()

    def _release_result(self, future: Future[Ready | None]) -> None:
        try:
            ready = future.result()
        except BaseException:  # noqa: BLE001 - _start cleans up after itself
            return
        if ready is not None:
            self.release(ready)

    def _top_up(self) -> None:
        with self._lock:
            if self._paused or self._closing.is_set():
                return
            while self._upcoming and len(self._reserved) < self.window:
                key, inv = self._upcoming.pop(0)
                try:
                    self._reserved[key] = self._pool.submit(self._start, inv)
                except RuntimeError:  # shut down meanwhile
                    return

    def _start(self, inv: Invocation) -> Ready | None:
        """Create, fill, attach, start; None whenever the ordinary path should handle it."""
        if self._closing.is_set() or not _startable(inv, self._in_process):
            return None
        try:
            api = self.engine.api()
            copies = container.copies_of(inv)
            config = container.container_config(inv, copies)
            config["Labels"] = {**config["Labels"], LABEL_PRESTARTED: "1"}
            adopted = None if copies or self._adopt_early is None else self._adopt_early(config)
            if adopted is not None:
                return self._adopt(adopted.container_id, adopted.socket)
            container_id = container.create(api, config)
        except BaseException:  # noqa: BLE001 - missing image, bad setting, cancelled: reported by the ordinary path
            return None
        try:
            container.upload(api, container_id, inv, copies)
            attached = container.attach(api, container_id)
            try:
                api.start(container_id)
            except BaseException:
                attached.close()
                raise
        except BaseException:  # noqa: BLE001 - the ordinary path reports it
            self._remover.put(container_id)
            return None
        if self._closing.is_set():
            self.release(Ready(container_id, attached))
            return None
        return Ready(container_id, attached)

    def _adopt(self, container_id: str, sock: socket.socket) -> Ready | None:
        """The launcher's early container (orchestrator.runtimes.container.early), started from this very
        create request: from here on it is this pool's to remove."""
        ready = Ready(container_id, container.Attached.over(sock))
        if not live.register(container_id, self.engine.remove_quietly) or self._closing.is_set():
            self.release(ready)
            return None
        return ready


def _startable(inv: Invocation, in_process: Callable[[Invocation], bool] | None) -> bool:
    if inv.image is None or inv.sandbox.image_pull_policy == "always":
        return False  # "always" pulls first, in the foreground, as the serial path does
    return in_process is None or not in_process(inv)


class PrestartedRuntime(Bytes):
    """The container runtime for one planned function: its pre-started container if there is one,
    else the ordinary path."""

    streams_stdout = True

    def __init__(self, prestarter: Prestarter, key: int, ordinary: Runtime) -> None:
        self.prestarter = prestarter
        self.key = key
        self.ordinary = ordinary

    def run(self, invocation: Invocation, stdin: bytes, on_stderr: StderrSink | None = None,
            on_stdout: StdoutSink | None = None) -> RunOutput:
        self.prestarter.resume()
        ready = self.prestarter.claim(self.key)
        if ready is None:
            return self.ordinary.run(invocation, stdin, on_stderr, on_stdout)
        started = time.monotonic()
        api = self.prestarter.engine.api()
        try:
            with SignalGuard() as guard, guard.armed():
                try:
                    stdout, stderr, code = container.exchange(api, ready.container_id, invocation, ready.attached, stdin, on_stderr, on_stdout)
                finally:
                    self.prestarter.release(ready)
        except (docker.errors.APIError, requests.exceptions.RequestException) as err:
            raise container.engine_error(invocation, err) from None
        return RunOutput(stdout=stdout, stderr=stderr, exit_code=code, duration=time.monotonic() - started)
