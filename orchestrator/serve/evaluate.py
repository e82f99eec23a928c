"""One function call as a server answers it: a ResourceList's bytes and an image in, the function's
ResourceList and its stderr out, or a typed refusal.

The call goes through the same registry `run` uses (orchestrator.runtimes.choose): kpt's catalog
in-process when the operator allows it, fnrun's own catalog images by their own code, every other
image in a sandboxed container behind the result cache. Nothing here knows about gRPC: the server
(orchestrator.serve.server) turns each refusal's kind into a status code."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import EnvironmentProblem, FnrunError, ImageUnavailable, InputError
from ..kinds import Kind
from ..requests import full_image
from ..run import resourcelist
from ..run.fastlist import HEADERS
from ..runtimes import Invocation, Registry, Runtime, Sandbox, Serving
from ..runtimes.protocol import BASE_ENV
from ..settings import DEFAULT_CACHE_SIZE, HelperPlace, default_cache_dir
from ..yamlio import fast

_HEADS = tuple(sorted(head.encode() for head in HEADERS))  # `apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n`, each version


@dataclass(frozen=True)
class Settings:
    """What the operator decided for every call (fnrun serve's options)."""

    sandbox: Sandbox = Sandbox()
    builtin_catalog: bool = False
    cache: bool = True
    cache_size: int = DEFAULT_CACHE_SIZE  # the result cache's bound (FNRUN_CACHE_SIZE)
    cache_dir: Path = field(default_factory=default_cache_dir)  # where it is (FNRUN_CACHE_DIR)
    workers: int | None = None  # processes a big list is decoded and encoded with (FNRUN_WORKERS; None: by the cores)
    helper: HelperPlace = HelperPlace()  # where the warm-call helper is had (FNRUN_WARM_HELPER, XDG_CACHE_HOME, CC)
    parallel: int = 4  # containers of one image running at once
    queue: int = 64  # calls of one image waiting for one of those
    warm: bool = True  # calls in warm containers kept across requests (FNRUN_WARM=0: every call cold)
    idle_ttl: float = 1800.0  # seconds a warm container may wait for its next call (Porch's 30 minutes)


@dataclass(frozen=True)
class Answer:
    """The function ran: its ResourceList (items and results) and its stderr, whatever its exit code."""

    image: str
    resource_list: bytes
    log: bytes
    exit_code: int
    duration: float
    cached: bool
    builtin: bool


class Busy(EnvironmentProblem):
    """Every container of an image is taken and its waiting list is full."""


class UnknownFunction(ImageUnavailable):
    """No builtin has the image and the engine neither holds nor can pull it."""


class Evaluator:
    """Calls functions for many clients at once, each call on its own: its own container (or its
    own forked builtin), its own input, its own output. Per image at most `parallel` run at once
    and at most `queue` wait; a call beyond that is refused, never parked without bound. It owns
    what outlives a call for the server's life, and lends it to each call: the `registry` (the
    engine connection, the host fork server, the result cache; by default one of its own) and
    the warm pool; `close` ends them."""

    def __init__(self, settings: Settings, registry: Registry | None = None) -> None:
        from ..runtimes.container.warm.pool import WarmPool

        self.settings = settings
        self.registry = registry if registry is not None else Registry()
        self._lock = threading.Lock()
        self._slots: dict[str, threading.BoundedSemaphore] = {}
        self._waiting: dict[str, int] = {}
        self.pool = WarmPool(per_image=settings.parallel, engine=self.registry.engine) if settings.warm else None
        # Started here, by the thread that owns the server: the fork server dies with the thread
        # that started it (PR_SET_PDEATHSIG), and a call's thread may end before other calls do.
        self.registry.forks.start()

    def _container(self, kind: Kind) -> Runtime:
        """A container call: in a warm container of the server's pool where it can be exactly
        what a fresh container gives (warm.plan decides), else cold."""
        cold = self.registry(kind)
        if self.pool is None or kind != Kind.CONTAINER:
            return cold
        from ..runtimes.container.warm.runtime import WarmRuntime

        return WarmRuntime(self.pool, cold, place=self.settings.helper)

    def expire(self) -> int:
        """Remove warm containers idle for the TTL; how many went."""
        return self.pool.expire(self.settings.idle_ttl) if self.pool is not None else 0

    def close(self) -> None:
        """Remove every idle warm container (those lent to a call go with it), then end the
        registry's fork server and engine connection."""
        try:
            if self.pool is not None:
                self.pool.close()
        finally:
            self.registry.close()

    def evaluate(self, resource_list: bytes, image: str) -> Answer:
        reference = _image(image)
        call = Invocation(name=reference, image=reference, env=dict(BASE_ENV), sandbox=self.settings.sandbox)
        serving = Serving(builtin=True, kpt_catalog=self.settings.builtin_catalog, cache=self.settings.cache, cache_size=self.settings.cache_size, cache_dir=self.settings.cache_dir,
                          workers=self.settings.workers)
        runtime = self.registry.choose(Kind.CONTAINER, call, serving, self._container)
        decoded = _decoded(resource_list, reference, self.settings.workers) if runtime.items_always or not _list_head(resource_list) else None
        with self._slot(reference):
            try:
                return _run(runtime, call, resource_list, decoded, self.settings.workers)
            except ImageUnavailable as err:
                raise UnknownFunction(str(err)) from None

    def waiting(self) -> int:
        """Calls waiting for a container now, all images together."""
        with self._lock:
            return sum(self._waiting.values())

    @contextmanager
    def _slot(self, image: str) -> Iterator[None]:
        with self._lock:
            slots = self._slots.setdefault(image, threading.BoundedSemaphore(self.settings.parallel))
            if self._waiting.get(image, 0) >= self.settings.queue:
                raise Busy(f"function {image}: {self.settings.parallel} calls run and {self.settings.queue} wait already; try again later")
            self._waiting[image] = self._waiting.get(image, 0) + 1
        try:
            slots.acquire()
        finally:
            with self._lock:
                self._waiting[image] -= 1
        try:
            yield
        finally:
            slots.release()


def _decoded(resource_list: bytes, reference: str, workers: int | None) -> resourcelist.Decoded:
    """The request's items, or INVALID_ARGUMENT's one line: not UTF-8, not a ResourceList."""
    source = f"the ResourceList for {reference}"
    decoded = resourcelist.decode(fast.decode(resource_list, source), source, workers)
    if decoded.kind != "ResourceList":
        raise InputError(f"{source}: not a ResourceList (kind: ResourceList, items: [...])")
    return decoded


def _list_head(resource_list: bytes) -> bool:
    """The request opens as a ResourceList does when kpt, Porch or fnrun write one: a function that
    takes bytes gets it as it came, unparsed here (its items are the function's to read). Any
    other layout is decoded whole first, so what is not a ResourceList is refused here."""
    return resource_list.startswith(_HEADS)


def _run(runtime: Runtime, call: Invocation, resource_list: bytes, decoded: resourcelist.Decoded | None, workers: int | None) -> Answer:
    """The call, by the items where the runtime takes them so (kpt's catalog in-process: each item
    keeps its own text, comments included, as the catalog's containers keep them), else by bytes."""
    assert call.image is not None
    if runtime.items_always:
        assert decoded is not None
        handed = runtime.run_items(call, decoded.items, decoded.function_config)
        if handed is not None:
            body = resourcelist.encode(handed.items, decoded.function_config, workers) + _results(handed.results) if handed.items is not None else ""
            return Answer(call.image, body.encode(), handed.stderr.encode(), handed.exit_code, handed.duration, handed.cached, handed.builtin)
    out = runtime.run(call, resource_list)
    return Answer(call.image, out.stdout, out.stderr.encode(), out.exit_code, out.duration, out.cached, out.builtin)


def _results(results: list) -> str:
    return fast.dump({"results": results}) if results else ""


def _image(image: str) -> str:
    """The image as a Kptfile names it: a short name is kpt's catalog's."""
    from ..render.reference import check_reference

    name = image.strip()
    if not name:
        raise InputError("the request names no image")
    reference = full_image(name, None)
    assert reference is not None
    check_reference(reference, "the request's image")
    return reference


__all__ = ["Answer", "Busy", "Evaluator", "FnrunError", "Settings", "UnknownFunction"]
