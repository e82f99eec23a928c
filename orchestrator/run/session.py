"""One run's containers, from the moment the run knows its functions until it ends.

The session pre-starts the planned container functions (orchestrator.runtimes.container.prestart), hands
each step the runtime that uses its pre-started container, and guarantees the cleanup: SIGINT and
SIGTERM become exceptions in the main thread while it lasts (orchestrator.runtimes.supervise.interrupts),
and leaving it, however that happens, removes every container it started, used or not.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING

from ..kinds import Kind
from ..resource import Resource
from ..runtimes import Registry, Runtime
from ..runtimes.supervise.interrupts import SignalGuard
from ..select.functions import FunctionSpec
from .units import begin

if TYPE_CHECKING:
    from ..runtimes import Invocation
    from ..runtimes.container.prestart import Prestarter
    from ..runtimes.container.warm.plan import Plan, Planned
    from ..runtimes.container.warm.pool import WarmPool
    from ..runtimes.container.warm.spawn import Spawner
    from ..settings import HelperPlace
    from .options import RunOptions, RuntimeFor


class RunSession:
    def __init__(self, registry: Registry, prestarter: Prestarter | None, warm: Warmth | None = None) -> None:
        self.registry = registry
        self._runtime_for: RuntimeFor = registry
        self.prestarter = prestarter
        self.warm = warm

    def runtime_for(self, key: int) -> RuntimeFor:
        """What step `key` runs on: a warm container of its image when the run calls that image
        more than once, else its pre-started container when it is a container function."""
        if self.prestarter is None and (self.warm is None or key not in self.warm.keys):
            return self._runtime_for

        def choose(kind: Kind) -> Runtime:
            ordinary = self._runtime_for(kind)
            if kind != Kind.CONTAINER:
                return ordinary
            if self.warm is not None and key in self.warm.keys:
                from ..runtimes.container.warm.runtime import WarmRuntime

                return WarmRuntime(self.warm.pool, ordinary, self.warm.spawner, key, self.warm.planned.get(key), self.warm.place)
            from ..runtimes.container.prestart import PrestartedRuntime

            assert self.prestarter is not None
            return PrestartedRuntime(self.prestarter, key, ordinary)

        return choose

    def done(self, key: int) -> None:
        """Step `key` ran, was skipped or hit the cache: an unclaimed container (or a warm call
        started ahead) goes."""
        if self.prestarter is not None:
            self.prestarter.discard(key)
        if self.warm is not None:
            self.warm.spawner.forget(key)


@contextmanager
def session(
    planned: list[tuple[int, FunctionSpec]], options: RunOptions, root: Path, registry: Registry | None, resources: list[Resource]
) -> Iterator[RunSession]:
    """Pre-start `planned` (key, spec) in run order, on the run's `registry` (its engine, its fork
    server, the launcher's early container; None: one of the session's own, closed at its end);
    only with this machine's container runtime (not --server's) and in the main thread.
    `resources` are what the first function will see."""
    if registry is None:
        with Registry() as own:
            with session(planned, options, root, own, resources) as active:
                yield active
        return
    begin()
    calls = _invocations(planned, options, root)  # once per step: what each container function's call will be
    in_process = {key: _in_process(spec, calls.get(key), options, registry) for key, spec in planned if spec.kind == Kind.CONTAINER}
    _start_fork_server([runtime for runtime in in_process.values() if runtime is not None], registry)
    containers = [(key, spec) for key, spec in planned if spec.kind == Kind.CONTAINER and in_process[key] is None]
    if not containers or registry.remote is not None or threading.current_thread() is not threading.main_thread():
        yield RunSession(registry, None)
        return
    with SignalGuard() as guard:
        prestarter = warm = None
        try:
            with guard.armed():  # asks the engine about images; starts nothing
                warm = warmth(containers, calls, registry, options.settings.helper) if options.warm else None
            # Held: what starts containers in the background is the session's, to close below,
            # before a stop may cut in (one cut inside _prestarter lost it, and what it started).
            cold = [(key, spec) for key, spec in containers if warm is None or key not in warm.keys]
            prestarter = _prestarter(cold, calls, options, planned[0][1], resources, registry) if cold else None
            if warm is not None:
                _warm_ahead(warm, options, calls, planned[0], resources, prestarter, registry)
            with guard.armed():
                yield RunSession(registry, prestarter, warm)
        finally:
            with guard.held():
                if prestarter is not None:
                    prestarter.close()
                if warm is not None:
                    warm.spawner.close()
                    warm.pool.close()


@dataclass
class Warmth:
    """The run's warm containers: which steps go to them (by key) and the pool that holds them."""

    keys: set[int]
    pool: WarmPool
    plans: list[Plan]
    spawner: Spawner  # starts the next warm call's process before its turn
    planned: dict[int, Planned]  # what each warm step's call was worked out to need, at the start
    place: HelperPlace  # where the warm-call helper is had (the run's settings)


def _invocations(planned: list[tuple[int, FunctionSpec]], options: RunOptions, root: Path) -> dict[int, Invocation]:
    """Each container step's invocation, by key; a step whose invocation fails is left out (its
    own turn reports what is wrong, as ever)."""
    from ..errors import FnrunError
    from .invocations import invocation

    calls = {}
    for key, spec in planned:
        if spec.kind != Kind.CONTAINER:
            continue
        try:
            calls[key] = invocation(spec, options, root)
        except FnrunError:
            continue
    return calls


def warmth(containers: list[tuple[int, FunctionSpec]], calls: dict[int, Invocation], registry: Registry,
           place: HelperPlace) -> Warmth | None:
    """The steps whose image (with the same sandbox) the run calls more than once; None when none."""
    from ..errors import FnrunError
    from ..runtimes.container.warm.calls import fits
    from ..runtimes.container.warm.plan import NoWarm, Planned, plan

    by_key: dict[str, list[int]] = {}
    plans: dict[str, Plan] = {}
    planned: dict[int, Planned] = {}
    fitting: dict[Path | None, bool] = {}  # one walk per function-config directory
    for key, _ in containers:
        call = calls.get(key)
        if call is None:
            continue
        try:
            found = plan(call, registry.engine.api, place)
        except FnrunError:
            continue  # reported when the function's turn comes, as ever
        if isinstance(found, NoWarm):
            continue
        if call.local_dir not in fitting:
            fitting[call.local_dir] = fits(call.local_dir)
        by_key.setdefault(found.key, []).append(key)
        plans.setdefault(found.key, found)
        planned[key] = Planned(call, found, fitting[call.local_dir])
    shared = {k: keys for k, keys in by_key.items() if len(keys) > 1}
    if not shared:
        return None
    from ..runtimes.container.warm.pool import WarmPool
    from ..runtimes.container.warm.spawn import Spawner

    pool = WarmPool(per_image=WARM_PER_IMAGE, engine=registry.engine, adopt=registry.adopt)
    units = dict(containers)
    for found_key, steps in shared.items():
        if plans[found_key].zygote and len({units[key].directory for key in steps}) == 1:
            pool.limit(found_key, 1)  # one pipeline: its calls come one after another, each a fork
    keys = {key for keys in shared.values() for key in keys}
    planned = {key: step for key, step in planned.items() if key in keys}
    return Warmth(keys, pool, [plans[k] for k in shared], Spawner(pool, sorted(planned.items())), planned, place)


# Containers of one image at most, whatever --jobs (a start costs more than a call): one serves
# the current call while the other holds the next call's process, started ahead (warm.spawn), or
# serves a package rendered at the same time. An image with a zygote (its calls are forks) in one
# pipeline gets one: a second container's start would cost more than it saves.
WARM_PER_IMAGE = 2


def _warm_ahead(warm: Warmth, options: RunOptions, calls: dict[int, Invocation], first: tuple[int, FunctionSpec],
                resources: list[Resource], prestarter: Prestarter | None, registry: Registry) -> None:
    """Start the warm containers now; with the result cache on, once a call misses it (the first
    step is asked at once, in the background, as for the pre-started ones)."""
    warm.pool.expect(warm.plans, paused=options.cache)
    if not options.cache:
        warm.spawner.kick()
    if options.cache and first[0] in warm.keys:
        import_module("orchestrator.runtimes.cache")  # before the thread: see _prestarter

        def probe() -> None:
            try:
                if _misses_cache(first[1], calls[first[0]], resources, options, registry):
                    warm.pool.resume()
                    warm.spawner.kick()
                    if prestarter is not None:
                        prestarter.resume()
            except Exception:  # noqa: BLE001 - the function's own turn reports what is wrong
                pass

        threading.Thread(target=probe, name="fnrun-warm-probe", daemon=True).start()


def _in_process(spec: FunctionSpec, call: Invocation | None, options: RunOptions, registry: Registry) -> Runtime | None:
    """The runtime of a container function that will run as a builtin: nothing to start ahead for
    it (and no docker SDK to import, which costs more than a builtin pipeline's whole run)."""
    if call is None or not (options.builtin or options.builtin_catalog):
        return None
    from ..errors import FnrunError
    from .invocations import serving

    try:
        return registry.in_process(spec.kind, call, serving(spec, call, options))
    except FnrunError:
        return None  # reported when the function's turn comes, as ever


def _start_fork_server(runtimes: list[Runtime], registry: Registry) -> None:
    """Builtins run in children of the run's fork server (runtimes.host.zygote): started here,
    while the run has no other thread yet, as a fork of this process with their modules imported."""
    forkable = sorted({r.forks for r in runtimes if r.forks is not None})
    if forkable:
        registry.forks.start(forkable)


def _prestarter(containers: list[tuple[int, FunctionSpec]], calls: dict[int, Invocation], options: RunOptions, first: FunctionSpec,
                resources: list[Resource], registry: Registry) -> Prestarter:
    """With the result cache on, nothing starts until a function misses it; whether the first one
    does is asked at once, in the background (an unchanged re-run then starts no container)."""
    from ..runtimes.container.prestart import Prestarter

    # What the background threads will import, imported here first: two threads importing the
    # same modules at once can trip the import system's deadlock detection.
    if options.builtin:
        import_module("orchestrator.runtimes.host.builtin")
    if options.cache:
        import_module("orchestrator.runtimes.cache")

    upcoming = [(key, calls[key]) for key, _ in containers if key in calls]
    probe = None
    if options.cache and upcoming and upcoming[0][0] == 0:
        probe = partial(_misses_cache, first, upcoming[0][1], resources, options, registry)
    answers = (lambda call: registry.sources.module_for(call) is not None) if options.builtin else None  # no container to start ahead for it
    prestarter = Prestarter(options.jobs, registry.engine, paused=options.cache, in_process=answers, probe=probe, adopt=registry.adopt)
    prestarter.plan(upcoming)
    return prestarter


def _misses_cache(spec: FunctionSpec, call: Invocation, resources: list[Resource], options: RunOptions, registry: Registry) -> bool:
    """Whether the first function misses the result cache: asked with the very input its run will
    send (a subpackage's step in render sees package-relative paths), else it always misses."""
    from ..merge import scope
    from . import resourcelist

    items, _ = scope.split(spec, resources)
    spec, items = scope.as_handed(spec, items, options.package_paths)
    stdin = resourcelist.encode(items, spec.config, options.settings.workers).encode("utf-8")
    return registry.caching(registry(Kind.CONTAINER), options.settings.cache_dir, options.settings.cache_size).would_run(call, stdin)

