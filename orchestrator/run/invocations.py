"""What a FunctionSpec becomes before it runs: the policy checks (exec, network, writable
mounts), the sandboxed invocation (environment, /local, mounts, limits), and what the user lets
serve it, for the runtimes' registry to pick its runtime by (orchestrator.runtimes.choose)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from .. import runtimes
from ..errors import InputError
from ..kinds import Kind
from ..runtimes import Invocation, Mount, Runtime
from ..runtimes.container.access import check_readable
from ..runtimes.container.settings import function_env
from ..select.functions import FunctionSpec, MountSpec

if TYPE_CHECKING:
    from .options import RunOptions, RuntimeFor


def check_policy(specs: list[FunctionSpec], options: RunOptions, root: Path) -> None:
    """Refuse, before anything runs, what the user has not allowed."""
    for spec in specs:
        where = f"{spec.declared_in}: " if spec.declared_in else ""
        if spec.kind == Kind.EXEC and not options.enable_exec:
            raise InputError(f"{where}exec function {spec.exec_path} needs --allow-exec")
        if spec.network and not options.sandbox.network:
            raise InputError(f"{where}function {spec.name} declares network: true; pass --network to allow it")
        for mount in spec.mounts:
            _writable_mount_readable(spec, _mount_source(root, spec, mount), mount, options)
    for mount in options.mounts:
        source = _mount_source(root, None, mount)
        for spec in specs:
            _writable_mount_readable(spec, source, mount, options)
    if options.lock is not None:  # a locked run: every image is the locked content, or nothing runs
        options.lock.check(specs, options.sandbox.image_pull_policy, root)


def _writable_mount_readable(spec: FunctionSpec, source: Path, mount: MountSpec, options: RunOptions) -> None:
    """/local and read-only mounts the sandbox user cannot read are copied into the container
    (runtimes.container.upload); a writable mount cannot be a copy, so say so before anything runs."""
    if spec.kind == Kind.CONTAINER and not mount.read_only:
        check_readable(source, mount.target, spec.name, options.sandbox.as_current_user)


def _mount_source(root: Path, spec: FunctionSpec | None, mount: MountSpec) -> Path:
    base = root / spec.directory if spec else Path.cwd()
    source = (base / mount.source).resolve()
    real_root = root.resolve()
    if source != real_root and real_root not in source.parents:
        who = f"function {spec.name}" if spec else "--mount"
        raise InputError(f"{who}: mount source {mount.source} is outside the package")
    if not source.exists():
        raise InputError(f"mount source {mount.source} does not exist")
    return source


def _local_dir(spec: FunctionSpec, root: Path) -> Path | None:
    """The directory shown at /local: the function config's own."""
    local_dir = (root / spec.directory) if spec.declared_in is not None else None
    if local_dir is not None and not local_dir.is_dir():
        return None  # a function declared in a stream on stdin: no directory to show at /local
    return local_dir


def invocation(spec: FunctionSpec, options: RunOptions, root: Path) -> Invocation:
    """The sandboxed invocation of a function: environment, /local, mounts, limits."""
    env = function_env(spec.envs, options.env)
    local_dir = _local_dir(spec, root)
    mounts = tuple(Mount(_mount_source(root, spec, m), m.target, m.read_only) for m in spec.mounts)
    mounts += tuple(Mount(_mount_source(root, None, m), m.target, m.read_only) for m in options.mounts)
    exec_path = None
    if spec.kind in (Kind.EXEC, Kind.STARLARK) and spec.exec_path:
        base = root / spec.directory if spec.declared_in is not None else Path.cwd()
        exec_path = (base / spec.exec_path).absolute()
    return Invocation(
        name=spec.name,
        image=options.lock.reference(spec.image) if options.lock is not None and spec.image else spec.image,
        exec_path=exec_path,
        args=spec.args,
        env=env,
        mounts=mounts,
        local_dir=local_dir.resolve() if local_dir else None,
        sandbox=options.sandbox,
        network=spec.network if spec.declared_in is not None else None,
        mount_root=root.resolve(),
    )


def choose_runtime(spec: FunctionSpec, call: Invocation, options: RunOptions, registry: runtimes.Registry, runtime_for: RuntimeFor) -> Runtime:
    """Where a function runs, as the run's registry decides it from what the user allowed
    (`runtime_for`: the step's ordinary runtimes, maybe its pre-started or warm container)."""
    return registry.choose(spec.kind, call, serving(spec, call, options), runtime_for)


def serving(spec: FunctionSpec, call: Invocation, options: RunOptions) -> runtimes.Serving:
    """What the user lets serve a function other than its image; under a lock, only what the lock
    allows for it (the lock decides, the registry obeys)."""
    lock = options.lock if spec.kind == Kind.CONTAINER else None
    locked = lock is not None
    allows = lock.builtin_for(spec, call, options.builtin, options.sandbox.image_pull_policy) if lock is not None else None
    switches = options.settings
    return runtimes.Serving(options.builtin, options.builtin_catalog, options.cache, locked, allows,
                            cache_size=switches.cache_size, cache_dir=switches.cache_dir, handover=switches.builtin_handover, fork=switches.builtin_fork,
                            workers=switches.workers)
