"""One run's containers, from the moment the run knows its functions until it ends.

The session pre-starts the planned container functions (orchestrator.runtimes.container.prestart), hands
each step the runtime that uses its pre-started container, and guarantees the cleanup: SIGINT and
SIGTERM become exceptions in the main thread while it lasts (orchestrator.runtimes.supervise.interrupts),
and leaving it, however that happens, removes every container it started, used or not.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from functools import partial
from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING, Iterator

from ..select.functions import FunctionSpec
from ..resource import Resource
from ..runtimes import Runtime, get_runtime
from ..runtimes.supervise.interrupts import SignalGuard
from .units import begin

if TYPE_CHECKING:
    from .options import RunOptions, RuntimeFor
    from ..runtimes import Invocation
    from ..runtimes.container.prestart import Prestarter


class RunSession:
    def __init__(self, runtime_for: "RuntimeFor", prestarter: "Prestarter | None") -> None:
        self._runtime_for = runtime_for
        self.prestarter = prestarter

    def runtime_for(self, key: int) -> "RuntimeFor":
        """What step `key` runs on: its pre-started container when it is a container function."""
        if self.prestarter is None:
            return self._runtime_for

        def choose(kind: str) -> Runtime:
            ordinary = self._runtime_for(kind)
            if kind != "container":
                return ordinary
            from ..runtimes.container.prestart import PrestartedRuntime

            return PrestartedRuntime(self.prestarter, key, ordinary)

        return choose

    def done(self, key: int) -> None:
        """Step `key` ran, was skipped or hit the cache: an unclaimed container goes."""
        if self.prestarter is not None:
            self.prestarter.discard(key)


@contextmanager
def session(
    planned: list[tuple[int, FunctionSpec]], options: "RunOptions", root: Path, runtime_for: "RuntimeFor", resources: list[Resource]
) -> Iterator[RunSession]:
    """Pre-start `planned` (key, spec) in run order; only with the real container runtime (a
    library caller's own runtime_for decides for itself) and in the main thread. `resources`
    are what the first function will see."""
    begin()
    if options.builtin:
        from ..runtimes.host.builtin import forget_images

        forget_images()
    in_process = {key: _in_process(spec, options, root) for key, spec in planned if spec.kind == "container"}
    _start_fork_server([runtime for runtime in in_process.values() if runtime is not None])
    containers = [(key, spec) for key, spec in planned if spec.kind == "container" and in_process[key] is None]
    if not containers or runtime_for is not get_runtime or threading.current_thread() is not threading.main_thread():
        yield RunSession(runtime_for, None)
        return
    with SignalGuard() as guard:
        prestarter = None
        try:
            with guard.armed():
                prestarter = _prestarter(containers, options, root, planned[0][1], resources)
                yield RunSession(runtime_for, prestarter)
        finally:
            with guard.held():
                if prestarter is not None:
                    prestarter.close()


def _in_process(spec: FunctionSpec, options: "RunOptions", root: Path) -> Runtime | None:
    """The runtime of a container function that will run as a builtin: nothing to start ahead for
    it (and no docker SDK to import, which costs more than a builtin pipeline's whole run)."""
    if not (options.builtin or options.builtin_catalog):
        return None
    from ..errors import FnrunError
    from .invocations import in_process_runtime, invocation

    try:
        return in_process_runtime(spec, invocation(spec, options, root), options)
    except FnrunError:
        return None  # reported when the function's turn comes, as ever


def _start_fork_server(runtimes: list[Runtime]) -> None:
    """Builtins run in children of the fork server (runtimes.host.zygote): started here, while
    the run has no other thread yet, as a fork of this process with their modules imported."""
    if not runtimes:
        return
    from ..runtimes.host.builtin import FUNCTIONS_DIR, BuiltinRuntime

    modules = sorted({r.module for r in runtimes if isinstance(r, BuiltinRuntime)})
    if modules:
        from ..runtimes.host import forked

        if any(forked.can_fork(module, FUNCTIONS_DIR) for module in modules):
            forked.start(module for module in modules if forked.can_fork(module, FUNCTIONS_DIR))


def _prestarter(containers: list[tuple[int, FunctionSpec]], options: "RunOptions", root: Path, first: FunctionSpec, resources: list[Resource]) -> "Prestarter":
    """With the result cache on, nothing starts until a function misses it; whether the first one
    does is asked at once, in the background (an unchanged re-run then starts no container)."""
    from ..errors import FnrunError
    from .invocations import invocation
    from ..runtimes.container.prestart import Prestarter

    # What the background threads will import, imported here first: two threads importing the
    # same modules at once can trip the import system's deadlock detection.
    if options.builtin:
        import_module("orchestrator.runtimes.host.builtin")
    if options.cache:
        import_module("orchestrator.runtimes.cache")

    upcoming = []
    for key, spec in containers:
        try:
            upcoming.append((key, invocation(spec, options, root)))
        except FnrunError:
            continue  # reported when the function's turn comes, as ever
    probe = None
    if options.cache and upcoming and upcoming[0][0] == 0:
        probe = partial(_misses_cache, first, upcoming[0][1], resources)
    prestarter = Prestarter(options.jobs, paused=options.cache, in_process=_builtin_answers if options.builtin else None, probe=probe)
    prestarter.plan(upcoming)
    return prestarter


def _builtin_answers(call: "Invocation") -> bool:
    """A catalog image whose own code runs in-process instead: no container to start ahead for it."""
    from ..runtimes.host.builtin import builtin_module

    return builtin_module(call) is not None


def _misses_cache(spec: FunctionSpec, call: "Invocation", resources: list[Resource]) -> bool:
    from . import resourcelist
    from ..merge import scope
    from .invocations import caching

    items, _ = scope.split(spec, resources)
    stdin = resourcelist.encode(items, spec.config).encode("utf-8")
    return caching(get_runtime("container")).would_run(call, stdin)  # type: ignore[attr-defined]

