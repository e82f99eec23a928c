"""One small interface for every way of running a function (pre-commit's lang_base, kyaml's runtimes).

A runtime only builds and runs the sandboxed invocation: bytes in on stdin, bytes out on stdout.
Scoping, annotation reconciliation and write-back live in the pipeline, shared by all runtimes.
Every runtime has every member of `Runtime`: what it cannot do it declares so (`Bytes` holds the
declarations of a runtime that only takes and gives bytes), and nobody probes for a member.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from ..option_schema import default
from ..sizes import parse_memory, parse_size


@dataclass(frozen=True)
class Mount:
    """A bind mount into the function's container; read-only unless asked otherwise."""

    source: Path
    target: str
    read_only: bool = True


#: What every function's environment holds, as kpt sets it: the KRM function protocol's switches.
BASE_ENV = {"LOG_TO_STDERR": "true", "STRUCTURED_RESULTS": "true"}


@dataclass(frozen=True)
class Sandbox:
    """Limits every function runs under. Defaults are stricter than kpt's and kustomize's, and the
    command line's (orchestrator.option_schema): a library caller gets what a user gets."""

    network: bool = False
    as_current_user: bool = False
    read_only_root: bool = True
    tmpfs_size: str = default("tmpfs_size")
    memory: int = parse_memory(default("memory"))  # bytes (--memory, parsed at the edge: orchestrator.sizes)
    pids_limit: int = default("pids_limit")
    # Soft = hard rlimits per container: a function needs no million file descriptors, and an
    # engine's defaults (podman's 1048576) can exceed what the host lets it set.
    nofile_limit: int = 1024
    nproc_limit: int = 4096  # counted per uid across the engine's host; pids_limit caps one container
    cpus: float = default("cpus")
    timeout: float = default("timeout")
    drop_capabilities: bool = True
    image_pull_policy: str = default("image_pull_policy")  # one of PULL_POLICIES
    max_output: int = parse_size(default("max_output"))  # bytes of stdout read from a function before it is killed
    oci_runtime: str | None = None  # an OCI runtime registered with the engine (runsc, crun); None = its default
    # /local and mounts: bind-mounted, or uploaded into the container (a remote engine cannot see
    # this machine's paths); auto = upload when the engine is remote (orchestrator.runtimes.container.remote).
    mount_mode: str = default("mount_mode")  # auto | bind | upload


@dataclass(frozen=True)
class Invocation:
    """Everything a runtime needs to start one function once."""

    name: str  # how messages name the function: its image or exec path
    image: str | None = None
    exec_path: Path | None = None
    args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    mounts: tuple[Mount, ...] = ()
    local_dir: Path | None = None  # mounted read-only at /local (the function config's directory)
    sandbox: Sandbox = Sandbox()
    # What the function declares: True = `network: true` (an error unless sandbox.network, the
    # user's --network), False = declared without network (never gets one), None = not declared
    # (an ad-hoc --image run: follows sandbox.network).
    network: bool | None = None
    mount_root: Path | None = None  # when set, every mount source must resolve inside it (the package)


@dataclass(frozen=True)
class RunOutput:
    stdout: bytes
    stderr: str
    exit_code: int
    duration: float
    cached: bool = False  # replayed from the result cache (orchestrator.runtimes.cache)
    builtin: bool = False  # a catalog image's code ran in-process (orchestrator.runtimes.host.builtin)


@dataclass(frozen=True)
class ItemsOutput(RunOutput):
    """What `Runtime.run_items` gives back: the run, whose stdout is the child's own note of what
    changed (not a ResourceList), and the function's items and results as fnrun holds them
    (orchestrator.runtimes.host.handover). `items` is None when it handed nothing back (it failed
    before writing: its exit code says so)."""

    items: list[Any] | None = None
    results: list[dict] = field(default_factory=list)


StderrSink = Callable[[str], None]
#: Sees each piece of stdout as it arrives (fnrun decodes a big output while the function still
#: writes it); RunOutput.stdout still holds all of it. A runtime may never call it (a cache hit).
StdoutSink = Callable[[bytes], None]


class Runtime(Protocol):
    """Run one invocation to completion. Raise FnrunError for what stops the run before or outside
    the function (missing image, timeout, engine unreachable); return a non-zero exit_code as is.

    Beside bytes in and out, three capabilities, each declared by every runtime:
    `takes_items`: `run_items` may run the function over the items as fnrun holds them, with no
    ResourceList text either way (a catalog function in a fork); else it always answers None.
    `items_always`: `run_items` is asked even where the items' text is the result (stdin,
    `--output -`), since the text it hands back (each item's own, or that text edited) is the
    function's, and `run` gives no better (kpt's catalog in fnrun's versions answers JSON).
    `streams_stdout`: `run` hands stdout to `on_stdout` while it arrives, so fnrun can decode it
    while the function still writes; else it never calls `on_stdout`.
    `forks`: the module of fnrun's functions it runs in a child of the fork server
    (runtimes.host.forked), which a run starts ahead with that module imported; else None."""

    takes_items: bool
    items_always: bool
    streams_stdout: bool
    forks: str | None

    def run(self, invocation: Invocation, stdin: bytes, on_stderr: StderrSink | None = None,
            on_stdout: StdoutSink | None = None) -> RunOutput: ...

    def run_items(self, invocation: Invocation, items: list[Any], function_config: dict | None,
                  on_stderr: StderrSink | None = None) -> ItemsOutput | None:
        """The function over `items` (resources as fnrun holds them); None where that does not
        apply to this call: the caller then sends the ResourceList as text to `run`."""
        ...


class Bytes:
    """The declarations of a runtime that takes a ResourceList's bytes and gives bytes back, and
    nothing more; a runtime with a capability overrides its declaration."""

    takes_items: bool = False
    items_always: bool = False
    streams_stdout: bool = False
    forks: str | None = None

    def run_items(self, invocation: Invocation, items: list[Any], function_config: dict | None,
                  on_stderr: StderrSink | None = None) -> ItemsOutput | None:
        return None
