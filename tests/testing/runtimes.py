"""Drive any runtime through the Runtime protocol alone (bytes in, bytes out, stderr lines to a
sink), so the contract every runtime owes the pipeline is checked once, the same way for all, and
each runtime's own tests keep to what is only its own.

A `Subject` is one runtime with a way to make it show each behaviour the contract speaks of: pass
the items through, fail with a message, outlast its timeout, flood its stdout. A runtime that
cannot be made to show one (fnrun's catalog code has no "sleep") leaves it out."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

import yaml

from orchestrator.runtimes import Invocation, RunOutput, Runtime, Sandbox

BEHAVIOURS = ("passes", "fails", "hangs", "floods")
PROCESS_BEHAVIOURS = ("echoes", "chatty", "streams")  # bytes, not ResourceLists: runtimes that run a program

# The same programs for every runtime that runs a process: a file for exec, `python3 -c` in a container.
PROGRAMS = {
    "passes": "import sys\nsys.stdout.write(sys.stdin.read())\n",
    "fails": "import sys\nsys.stdin.read()\nprint('oops: the function says no', file=sys.stderr)\nsys.exit(3)\n",
    "hangs": "import sys, time\nsys.stdin.read()\ntime.sleep(60)\n",
    "floods": "import sys\nsys.stdin.read()\nwhile True:\n    sys.stdout.write('x' * 65536)\n",
    # stdout and stdin as raw bytes: whatever comes in goes out
    "echoes": "import sys\nsys.stdout.buffer.write(sys.stdin.buffer.read())\n",
    # 4 MB out before reading any input: a runtime that writes all of stdin first deadlocks here
    "chatty": "import sys\nsys.stdout.write('x' * 4_000_000)\nsys.stdout.flush()\nsys.stdout.buffer.write(sys.stdin.buffer.read())\n",
    # stderr arrives while the function still runs; a last line without its line feed still counts
    "streams": "import sys, time\nprint('first', file=sys.stderr, flush=True)\ntime.sleep(1)\nsys.stderr.write('second\\nno newline')\nsys.exit(4)\n",
}
STARLARK = {
    "passes": "items = ctx.resource_list[\"items\"]\n",
    "fails": "fail(\"oops: the function says no\")\n",
    "hangs": "for i in range(100000000):\n    for j in range(100000000):\n        pass\n",
}


@dataclass
class Driven:
    """What one run gave back, as the pipeline would see it."""

    output: RunOutput
    stderr_lines: list[str] = field(default_factory=list)

    @property
    def items(self) -> list[dict]:
        return (yaml.safe_load(self.output.stdout) or {}).get("items") or []


@dataclass(frozen=True)
class Subject:
    """One runtime and the invocations that make it show each behaviour."""

    name: str
    runtime: Callable[[], Runtime]
    invocation: Callable[[str, Path], Invocation]  # behaviour, a scratch directory -> invocation
    behaviours: tuple[str, ...] = BEHAVIOURS


def resource_list(items: list[dict], config: dict | None = None) -> bytes:
    document: dict = {"apiVersion": "config.kubernetes.io/v1", "kind": "ResourceList", "items": items}
    if config is not None:
        document["functionConfig"] = config
    return yaml.safe_dump(document, sort_keys=False).encode()


def drive(subject: Subject, behaviour: str, scratch: Path, items: list[dict], sandbox: Sandbox | None = None) -> Driven:
    """Run `subject` showing `behaviour` over `items`; exceptions (FunctionError...) propagate."""
    call = subject.invocation(behaviour, scratch)
    if sandbox is not None:
        call = replace(call, sandbox=sandbox)
    driven = Driven(RunOutput(b"", "", 0, 0.0))
    driven.output = subject.runtime().run(call, resource_list(items, _config(call)), driven.stderr_lines.append)
    return driven


def drive_bytes(subject: Subject, behaviour: str, scratch: Path, stdin: bytes,
                on_stderr: Callable[[str], None] | None = None) -> RunOutput:
    """Run one of the process behaviours over raw bytes (no ResourceList: the bytes are the point)."""
    return subject.runtime().run(subject.invocation(behaviour, scratch), stdin, on_stderr)


def _config(call: Invocation) -> dict | None:
    """A functionConfig for the runtimes that read one: labels for set-labels (a key it must refuse
    when it is to fail), anything for Starlark."""
    if not call.name.startswith(("builtin", "starlark")):
        return None
    key = "bad key!" if call.name.endswith("(fails)") else "team"
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "config"}, "data": {key: "web"}}


def exec_subject() -> Subject:
    from orchestrator.runtimes.host.exec import ExecRuntime

    def invocation(behaviour: str, scratch: Path) -> Invocation:
        path = scratch / f"{behaviour}.py"
        path.write_text("#!/usr/bin/env python3\n" + PROGRAMS[behaviour])
        os.chmod(path, 0o755)
        return Invocation(name=f"exec {path.name}", exec_path=path, sandbox=Sandbox())

    return Subject("exec", ExecRuntime, invocation, BEHAVIOURS + PROCESS_BEHAVIOURS)


def container_subject(image: str) -> Subject:
    from orchestrator.runtimes.container.runtime import ContainerRuntime

    def invocation(behaviour: str, scratch: Path) -> Invocation:
        return Invocation(name=f"{image} ({behaviour})", image=image, args=("python3", "-c", PROGRAMS[behaviour]),
                          sandbox=Sandbox(image_pull_policy="never"))

    return Subject("container", ContainerRuntime, invocation, BEHAVIOURS + PROCESS_BEHAVIOURS)


def warm_subject(image: str) -> Subject:
    """The container behaviours again, every call in one warm container of `image` (the pool lasts
    for the test process: each call runs where the one before ran, whatever that one did)."""
    from orchestrator.runtimes.container.runtime import ContainerRuntime
    from orchestrator.runtimes.container.warm.runtime import WarmRuntime

    cold = container_subject(image)
    return Subject("warm", lambda: WarmRuntime(_warm_pool(), ContainerRuntime()), cold.invocation, cold.behaviours)


_pools: list = []


def _warm_pool():  # the pool type is imported lazily, as the runtimes are
    if not _pools:
        from orchestrator.runtimes.container.warm.pool import WarmPool

        _pools.append(WarmPool())
    return _pools[0]


def open_warm_pool() -> None:
    """Make the warm subject's pool now: called at a module fixture's set-up, its remover threads
    are that fixture's, not the first warm test's (testing.thread_guard)."""
    _warm_pool()


def close_warm_pools() -> None:
    """Remove the warm subject's containers (a module's tests share them; later modules count
    the containers this process has)."""
    while _pools:
        _pools.pop().close()


def starlark_subject() -> Subject:
    from orchestrator.runtimes.host.kpt_catalog import StarlarkFileRuntime

    def invocation(behaviour: str, scratch: Path) -> Invocation:
        path = scratch / f"{behaviour}.star"
        path.write_text(STARLARK[behaviour])
        return Invocation(name=f"starlark {path.name}", exec_path=path, mount_root=scratch, sandbox=Sandbox())

    return Subject("starlark", StarlarkFileRuntime, invocation,
                   ("passes", "fails", "hangs"))


def builtin_subject() -> Subject:
    """fnrun's set-labels code in a fork of a fork server of the test's own (stopped with the
    process, as a run's ends with its run): it passes items through (labelled), and fails on a
    label key Kubernetes would refuse."""
    from orchestrator.runtimes.host.builtin import BuiltinRuntime
    from orchestrator.runtimes.host.forked import ForkServer

    server = ForkServer()

    def invocation(behaviour: str, scratch: Path) -> Invocation:
        return Invocation(name=f"builtin set-labels ({behaviour})", image="fnrun/set-labels:v1", sandbox=Sandbox())

    return Subject("builtin", lambda: BuiltinRuntime("functions.set_labels", server=server), invocation, ("passes", "fails"))
