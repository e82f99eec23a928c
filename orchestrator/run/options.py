"""What a run was asked to do: the user's decisions as the pipeline, the invocations and the
session read them. Built at the edge (orchestrator.requests); nothing here parses a user's string."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from ..kinds import Kind
from ..runtimes import Invocation, Runtime, Sandbox
from ..settings import Settings

if TYPE_CHECKING:
    from ..runtimes.remote import Server
    from ..select.functions import FunctionSpec, MountSpec


class ImageLock(Protocol):
    """The fnrun.lock a run obeys (orchestrator.lock.pinning): which content each image runs as,
    and which builtin may answer for it. The run only asks; the lock decides."""

    def check(self, specs: list[FunctionSpec], pull_policy: str, root: Path) -> None: ...
    def reference(self, image: str) -> str: ...
    def builtin_for(self, spec: FunctionSpec, call: Invocation, builtin: bool, pull_policy: str) -> str | None: ...


@dataclass(frozen=True)
class RunOptions:
    """What the user decided on the command line (or a caller of the library)."""

    sandbox: Sandbox = Sandbox()
    enable_exec: bool = False
    global_scope: bool = False
    env: tuple[str, ...] = ()  # --env KEY[=VALUE], applied after the declared envs
    mounts: tuple[MountSpec, ...] = ()  # --mount, sources relative to the package root
    results_dir: Path | None = None
    cache: bool = False  # reuse results of identical container runs (orchestrator.runtimes.cache)
    builtin: bool = False  # run fnrun's catalog images in-process where equal (orchestrator.runtimes.host.builtin)
    builtin_catalog: bool = False  # kpt's catalog images by fnrun's own code (orchestrator.runtimes.host.kpt_catalog)
    jobs: int = 1  # --jobs: containers started ahead and independent functions run at once (orchestrator.run.units)
    lock: ImageLock | None = None  # the fnrun.lock every container image is run by (orchestrator.lock.pinning)
    file_names: str = "name_kind"  # --file-names: how a new resource without a path is named (annotations.FILE_NAMES)
    package_paths: bool = False  # render, as kpt: a step sees paths relative to its package (merge.scope.reconcile)
    error_results_fail: bool = True  # an error result fails the function even at exit 0 (render, as kpt: only with --strict-results)
    # Catalog functions may take the items as data and hand back values (orchestrator.runtimes.host.handover):
    # not where the items' text is the result (stdin, --output -), as only the function writes its text.
    handover: bool = True
    # An image the run calls more than once serves every call from one warm container, a fresh
    # process per call (orchestrator.runtimes.container.warm).
    warm: bool = True
    # Container functions go to the function runner at this address (`fnrun serve`; --server),
    # reading and writing stay here (orchestrator.runtimes.remote).
    server: Server | None = None
    # The environment's switches, read once at the edge (orchestrator.settings): the cache's
    # bound and how builtins run; the switches of options above are folded into them there.
    settings: Settings = Settings()


RuntimeFor = Callable[[Kind], Runtime]
