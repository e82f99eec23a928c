"""Every way fnrun runs a function, behind one protocol (`protocol.Runtime`: bytes of a
ResourceList in, bytes out, within a `Sandbox`; each optional capability declared), and the one
registry that decides which runtime serves a function.

- `container/`: a function image through the Engine API, sandboxed; the default for every image.
- `host/`: on this machine without an engine: a local executable (`exec`, only with
  --enable-exec), and builtins: catalog code in a child of the fork server (`builtin`,
  `handover`, `forked`, `zygote`, kpt's catalog and Starlark), confined as a container would
  confine it.
- `cache.py`: not a runtime but a wrapper around any runtime, replaying identical runs.
- `supervise/`: what every runtime that drives a function shares: bounded streams, signals,
  the children to end when a run is stopped.

The registry (below) is a run's own (or a server's, lent to each request it serves): it answers
by a function's kind, and `choose` is the one place that decides, for one invocation, whether a
builtin stands in for its image and whether the result cache wraps it. It holds what those
runtimes share for the run (the engine connection, the result cache, the host fork server, which
catalog images their own code may serve, the launcher's early container) and ends it all in
`close`. Runtimes are imported lazily, so exec-only use never loads docker."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from orchestrator.errors import InputError
from orchestrator.kinds import KINDS, Kind
from orchestrator.runtimes.protocol import Invocation, ItemsOutput, Mount, RunOutput, Runtime, Sandbox, StderrSink
from orchestrator.settings import DEFAULT_CACHE_SIZE, default_cache_dir

if TYPE_CHECKING:
    from orchestrator.runtimes.cache import CachingRuntime
    from orchestrator.runtimes.container.early import Adopted, EarlyContainer
    from orchestrator.runtimes.container.runtime import Engine
    from orchestrator.runtimes.host.forked import ForkServer
    from orchestrator.runtimes.host.sources import SourceCheck

__all__ = ["Invocation", "ItemsOutput", "Mount", "Registry", "RunOutput", "Runtime", "Sandbox", "Serving", "StderrSink", "KINDS", "Kind",
           "catalog_module"]


@dataclass(frozen=True)
class Serving:
    """What a run lets serve a container function other than its image, decided by the user."""

    builtin: bool = False  # fnrun's catalog images by their own code, where that cannot differ
    kpt_catalog: bool = False  # kpt's catalog images by fnrun's versions of them (--builtin-catalog)
    cache: bool = False  # container runs behind the result cache
    # Under a lock, only the lock says which builtin may answer: `locked` is True and `lock_allows`
    # the module it allows for this function, if any (orchestrator.lock.pinning).
    locked: bool = False
    lock_allows: str | None = None
    cache_size: int = DEFAULT_CACHE_SIZE  # the cache's bound, in bytes (FNRUN_CACHE_SIZE)
    cache_dir: Path = field(default_factory=default_cache_dir)  # where the cache is (FNRUN_CACHE_DIR)
    handover: bool = True  # fnrun's own catalog takes the items as data (FNRUN_BUILTIN_HANDOVER)
    fork: bool = True  # builtins in a child of the fork server where they can be (FNRUN_BUILTIN_FORK)
    workers: int | None = None  # processes big handed-back items are taken with (FNRUN_WORKERS; None: by the cores)


def catalog_module(image: str | None, kpt_catalog: bool = True) -> str | None:
    """The builtin module that implements `image`: fnrun's own catalog image's, or (when kpt's
    catalog may be served by fnrun's versions) one of kpt's catalog functions; None for others."""
    from orchestrator.runtimes.host.sources import CATALOG

    if image in CATALOG:
        return CATALOG[image]
    if not kpt_catalog:
        return None
    from orchestrator.runtimes.host import kpt_catalog as kpt

    name = kpt.catalog_name(image)
    return kpt.FUNCTIONS[name] if name else None


class Registry:
    """One run's runtimes (or one server's, for its life) and what they share, each made at its
    first use: the runtimes by kind, the engine connection, the result cache, the host fork
    server, which catalog images their own code may serve, and the launcher's `early` container
    for the run to adopt. `remote` serves container functions instead (--server: a function
    runner elsewhere). Calling it gives the ordinary runtime of a kind (the `RuntimeFor` the
    pipeline takes). `close` ends what it started (the fork server and its children, the engine
    connection) and hands the early container back to its owner, the launcher, which removes it
    unless the run adopted it (after the package is written, off the run's path); use it as a
    context manager."""

    def __init__(self, early: EarlyContainer | None = None, remote: Runtime | None = None) -> None:
        self.early = early
        self.remote = remote
        self._runtimes: dict[Kind, Runtime] = {}
        self._parts: dict[str, Any] = {}  # the engine, the fork server, the source check, the result cache (`_part`)
        self._lock = threading.RLock()

    def __call__(self, kind: Kind) -> Runtime:
        """The runtime for `kind` (a function's `container:`, `exec:` or `starlark:`)."""
        if kind == Kind.CONTAINER and self.remote is not None:
            return self.remote
        with self._lock:
            if kind not in self._runtimes:
                self._runtimes[kind] = self._make(kind)
            return self._runtimes[kind]

    def _make(self, kind: Kind) -> Runtime:
        if kind == Kind.CONTAINER:
            from orchestrator.runtimes.container.runtime import ContainerRuntime

            return ContainerRuntime(self.engine)
        if kind == Kind.EXEC:
            from orchestrator.runtimes.host.exec import ExecRuntime

            return ExecRuntime()
        if kind == Kind.STARLARK:
            from orchestrator.runtimes.host.kpt_catalog import StarlarkFileRuntime

            return StarlarkFileRuntime()
        raise InputError(f"unknown function runtime {kind!r}: use one of {', '.join(KINDS)}")

    @property
    def engine(self) -> Engine:
        """The run's engine connection (connected at its first request)."""
        return self._part("engine", _new_engine)

    @property
    def forks(self) -> ForkServer:
        """The run's host fork server (started by the session, or at the first builtin's call)."""
        return self._part("forks", _new_fork_server)

    @property
    def sources(self) -> SourceCheck:
        """Which catalog images their own code may serve, asked once per image in this run."""
        return self._part("sources", lambda: _new_source_check(self._connect))

    def _part(self, name: str, make: Callable[[], _Part]) -> _Part:
        """The part `name`, made at its first use (so its module is imported only then)."""
        with self._lock:
            if name not in self._parts:
                self._parts[name] = make()
            part: _Part = self._parts[name]
            return part

    def _connect(self) -> Any:
        return self.engine.api()

    def adopt(self, body: dict[str, Any]) -> Adopted | None:
        """The launcher's early container for this create request, if it was started for exactly
        that (runtimes.container.early); from then on the caller removes it."""
        return self.early.adopt(body) if self.early is not None else None

    def in_process(self, kind: Kind, call: Invocation, serving: Serving) -> Runtime | None:
        """The builtin that serves a function instead of a container, or None: a Starlark file
        always; under a lock, what the lock allows; else kpt's catalog functions when asked, and a
        catalog image's own code where it cannot differ from the image."""
        if kind == Kind.STARLARK:
            return self(kind)
        if kind != Kind.CONTAINER:
            return None

        def builtin(module: str) -> Runtime:
            from orchestrator.runtimes.host.builtin import BuiltinRuntime  # only where one serves

            return BuiltinRuntime(module, handover=serving.handover, fork=serving.fork, server=self.forks, workers=serving.workers)

        if serving.locked:
            return builtin(serving.lock_allows) if serving.lock_allows else None
        if serving.kpt_catalog:
            from orchestrator.runtimes.host.kpt_catalog import FUNCTIONS, catalog_name

            name = catalog_name(call.image)
            if name is not None:
                return builtin(FUNCTIONS[name])
        module = self.sources.module_for(call) if serving.builtin else None
        return builtin(module) if module else None

    def choose(self, kind: Kind, call: Invocation, serving: Serving, ordinary: Callable[[Kind], Runtime] | None = None) -> Runtime:
        """The runtime that runs `call`: a builtin where one serves it (never cached: that costs
        less than a cache lookup's hashing), else the `ordinary` runtime of its kind (by default
        this registry's; a step's may be a pre-started or warm container), behind the result
        cache when asked."""
        found = self.in_process(kind, call, serving)
        if found is not None:
            return found
        runtime = (ordinary or self)(kind)
        return self.caching(runtime, serving.cache_dir, serving.cache_size) if serving.cache and kind == Kind.CONTAINER else runtime

    def caching(self, runtime: Runtime, root: Path, bound: int = DEFAULT_CACHE_SIZE) -> CachingRuntime:
        """`runtime` behind the run's result cache (bounded by `bound` bytes, the first
        caller's: FNRUN_CACHE_SIZE, read at the edge)."""
        from orchestrator.runtimes.cache import CachingRuntime, ResultCache

        cache = self._part("cache", lambda: ResultCache(root, bound=bound))
        return CachingRuntime(runtime, cache, self._connect)

    def close(self) -> None:
        """End what the run started (the fork server and every child it has, the engine
        connection) and give the early container back: no later call adopts it. Idempotent."""
        with self._lock:
            forks, engine, self.early = self._parts.get("forks"), self._parts.get("engine"), None
        if forks is not None:
            forks.stop()
        if engine is not None:
            engine.close()

    def __enter__(self) -> Registry:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


_Part = TypeVar("_Part")


def _new_engine() -> Engine:
    from orchestrator.runtimes.container.runtime import Engine

    return Engine()


def _new_fork_server() -> ForkServer:
    from orchestrator.runtimes.host.forked import ForkServer

    return ForkServer()


def _new_source_check(connect: Callable[[], Any]) -> SourceCheck:
    from orchestrator.runtimes.host.sources import SourceCheck

    return SourceCheck(connect)
