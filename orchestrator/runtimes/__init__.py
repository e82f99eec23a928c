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

The registry (below): `get_runtime` answers by a function's kind; `choose` is the one place that
decides, for one invocation, whether a builtin stands in for its image, and whether the result
cache wraps it. Runtimes are imported lazily, so exec-only use never loads docker."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from orchestrator.errors import InputError
from orchestrator.kinds import KINDS, Kind
from orchestrator.runtimes.protocol import Invocation, ItemsOutput, Mount, RunOutput, Runtime, Sandbox, StderrSink
from orchestrator.settings import DEFAULT_CACHE_SIZE

if TYPE_CHECKING:
    from orchestrator.runtimes.cache import ResultCache

__all__ = ["Invocation", "ItemsOutput", "Mount", "RunOutput", "Runtime", "Sandbox", "Serving", "StderrSink", "KINDS", "Kind",
           "catalog_module", "caching", "choose", "get_runtime", "in_process"]

_runtimes: dict[Kind, Runtime] = {}


def get_runtime(kind: Kind) -> Runtime:
    """The process-wide runtime for `kind` (a function's `container:`, `exec:` or `starlark:`)."""
    if kind not in _runtimes:
        if kind == Kind.CONTAINER:
            from orchestrator.runtimes.container.runtime import ContainerRuntime

            _runtimes[kind] = ContainerRuntime()
        elif kind == Kind.EXEC:
            from orchestrator.runtimes.host.exec import ExecRuntime

            _runtimes[kind] = ExecRuntime()
        elif kind == Kind.STARLARK:
            from orchestrator.runtimes.host.kpt_catalog import StarlarkFileRuntime

            _runtimes[kind] = StarlarkFileRuntime()
        else:
            raise InputError(f"unknown function runtime {kind!r}: use one of {', '.join(KINDS)}")
    return _runtimes[kind]


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
    handover: bool = True  # fnrun's own catalog takes the items as data (FNRUN_BUILTIN_HANDOVER)
    fork: bool = True  # builtins in a child of the fork server where they can be (FNRUN_BUILTIN_FORK)


def catalog_module(image: str | None, kpt_catalog: bool = True) -> str | None:
    """The builtin module that implements `image`: fnrun's own catalog image's, or (when kpt's
    catalog may be served by fnrun's versions) one of kpt's catalog functions; None for others."""
    from orchestrator.runtimes.host.builtin import CATALOG

    if image in CATALOG:
        return CATALOG[image]
    if not kpt_catalog:
        return None
    from orchestrator.runtimes.host import kpt_catalog as kpt

    name = kpt.catalog_name(image)
    return kpt.FUNCTIONS[name] if name else None


def in_process(kind: Kind, call: Invocation, serving: Serving) -> Runtime | None:
    """The builtin that serves a function instead of a container, or None: a Starlark file always;
    under a lock, what the lock allows; else kpt's catalog functions when asked, and a catalog
    image's own code where it cannot differ from the image."""
    if kind == Kind.STARLARK:
        return get_runtime(kind)
    if kind != Kind.CONTAINER:
        return None
    from orchestrator.runtimes.host.builtin import BuiltinRuntime, builtin_module

    def builtin(module: str) -> Runtime:
        return BuiltinRuntime(module, handover=serving.handover, fork=serving.fork)

    if serving.locked:
        return builtin(serving.lock_allows) if serving.lock_allows else None
    if serving.kpt_catalog:
        from orchestrator.runtimes.host.kpt_catalog import FUNCTIONS, catalog_name

        name = catalog_name(call.image)
        if name is not None:
            return builtin(FUNCTIONS[name])
    module = builtin_module(call) if serving.builtin else None
    return builtin(module) if module else None


def choose(kind: Kind, call: Invocation, serving: Serving, ordinary: Callable[[Kind], Runtime] = get_runtime) -> Runtime:
    """The runtime that runs `call`: a builtin where one serves it (never cached: that costs less
    than a cache lookup's hashing), else the `ordinary` runtime of its kind (the run's own, maybe
    a pre-started or warm container), behind the result cache when asked."""
    found = in_process(kind, call, serving)
    if found is not None:
        return found
    runtime = ordinary(kind)
    return caching(runtime, serving.cache_size) if serving.cache and kind == Kind.CONTAINER else runtime


def caching(runtime: Runtime, bound: int = DEFAULT_CACHE_SIZE) -> Runtime:
    """`runtime` behind the process's one result cache (bounded by `bound` bytes, the first
    caller's: FNRUN_CACHE_SIZE, read at the edge)."""
    from orchestrator.runtimes.cache import CachingRuntime, ResultCache

    global _cache
    with _cache_lock:
        if _cache is None:
            _cache = ResultCache(bound=bound)
    return CachingRuntime(runtime, _cache)


_cache_lock = threading.Lock()
_cache: ResultCache | None = None
