"""The library API: what the CLI calls, and what tests and other programs should call.

Each entry reads like the data flow: read → (functions) → write."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from . import resourcelist, writer
from .reader import Package, read_package
from .writer import WritePlan
from .errors import InputError
from .yamlio import fast

if TYPE_CHECKING:
    from .functions import FunctionSpec
    from .pipeline import Events


def source(root: Path | str) -> str:
    """The package as a config.kubernetes.io/v1 ResourceList, comments and origin annotations included."""
    package = read_package(root)
    return resourcelist.encode(package.resources)


def sink(root: Path | str, content: str, source_name: str = "stdin") -> WritePlan:
    """Write a ResourceList, List or plain stream into root (created when missing).

    An existing root is brought in line with the input: files whose resources are unchanged keep
    their bytes, changed ones are edited in place, and resource files the input no longer holds are
    deleted (so `fnrun source d | filter | fnrun sink d` works like an in-place run)."""
    root = Path(root)
    original = read_package(root) if root.exists() else None
    decoded = resourcelist.decode(content, source_name)
    return writer.write(root, decoded.items, original)


def read_stdin() -> str:
    """All of stdin as text, with invalid UTF-8 reported as an input error."""
    return fast.decode(sys.stdin.buffer.read(), "stdin")




@dataclass(frozen=True)
class RunRequest:
    """Everything `fnrun run` can be asked, as plain values (what the CLI's flags become)."""

    directory: str
    image: str | None = None
    exec_path: str | None = None
    fn_config: Path | None = None
    arguments: tuple[str, ...] = ()
    enable_exec: bool = False
    global_scope: bool = False
    network: bool = False
    as_current_user: bool = False
    mounts: tuple[str, ...] = ()
    env: tuple[str, ...] = ()
    image_pull_policy: str = "ifNotPresent"
    timeout: float = 300.0
    memory: str = "512m"
    pids_limit: int = 256
    cpus: float = 1.0
    tmpfs_size: str = "64m"
    read_only_root: bool = True
    drop_capabilities: bool = True
    results_dir: Path | None = None
    to_stdout: bool = False
    quiet: bool = False


def run(request: RunRequest, events: "Events | None" = None) -> str | None:
    """Run functions over a package (or stdin); returns the ResourceList when output goes to stdout."""
    from .functions import adhoc, parse_mount_flag
    from .pipeline import PlainEvents, RunOptions, run_package, run_stream
    from .runtimes import Sandbox

    options = RunOptions(
        sandbox=Sandbox(
            network=request.network,
            as_current_user=request.as_current_user,
            read_only_root=request.read_only_root,
            tmpfs_size=request.tmpfs_size,
            memory=request.memory,
            pids_limit=request.pids_limit,
            cpus=request.cpus,
            timeout=request.timeout,
            drop_capabilities=request.drop_capabilities,
            image_pull_policy=request.image_pull_policy,
        ),
        enable_exec=request.enable_exec,
        global_scope=request.global_scope,
        env=request.env,
        mounts=tuple(parse_mount_flag(m) for m in request.mounts),
        results_dir=request.results_dir,
    )
    events = events or PlainEvents(quiet=request.quiet)
    from_stdin = request.directory == "-"
    root = None if from_stdin else Path(request.directory)
    functions = None
    if request.image or request.exec_path:
        functions = [adhoc(root, request.image, request.exec_path, request.fn_config, request.arguments)]
    elif request.arguments or request.fn_config:
        raise InputError("key=value arguments and --fn-config go with --image or --exec")
    if from_stdin:
        rendered, _ = run_stream(read_stdin(), functions, options, events)
        return rendered
    assert root is not None
    outcome = run_package(root, functions, options, events, write=not request.to_stdout)
    if request.to_stdout:
        return resourcelist.encode(outcome.resources)
    if outcome.plan is not None and not request.quiet:
        print(f"fnrun run: {outcome.plan.summary()}", file=sys.stderr)
    return None


def merge(sources: list[Path | str], destination: Path | str) -> WritePlan:
    """`fnrun merge`: two-way merge source packages onto a destination package, in place."""
    from .packagemerge import merge as merge_packages

    return merge_packages(sources, destination)


def merge3(ancestor: Path | str, updated: Path | str, destination: Path | str) -> WritePlan:
    """`fnrun merge3`: apply the ancestor→updated changes to the destination, keeping its edits."""
    from .packagemerge import merge3 as merge3_packages

    return merge3_packages(ancestor, updated, destination)


__all__ = ["Package", "RunRequest", "WritePlan", "list_functions", "merge", "merge3", "read_package", "read_stdin", "run", "sink", "source"]


def list_functions(root: Path | str, global_scope: bool = False) -> list["FunctionSpec"]:
    """The package's declared functions in the order `fnrun run` would run them."""
    from dataclasses import replace

    from .functions import discover

    specs = discover(read_package(root).resources)
    return [replace(s, global_scope=True) for s in specs] if global_scope else specs
