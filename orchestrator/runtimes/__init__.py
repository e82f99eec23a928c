"""Every way fnrun runs a function, behind one protocol (`protocol.Runtime`: bytes of a
ResourceList in, bytes out, within a `Sandbox`).

- `container/`: a function image through the Engine API, sandboxed; the default for every image.
- `host/`: on this machine without an engine: a local executable (`exec`, only with
  --enable-exec), and catalog code in a child of the fork server (`builtin`, `handover`, `zygote`,
  kpt's catalog and Starlark), confined as a container would confine it.
- `cache.py`: not a runtime but a wrapper around any runtime, replaying identical runs.
- `supervise/`: what every runtime that drives a function shares: bounded streams, signals,
  the children to end when a run is stopped.

`get_runtime` below answers by a function's kind ("container", "exec"); which in-process runtime
stands in for a container is chosen per function (orchestrator.run.invocations)."""

from __future__ import annotations

from orchestrator.errors import InputError
from orchestrator.runtimes.protocol import Invocation, Mount, RunOutput, Runtime, Sandbox, StderrSink

__all__ = ["Invocation", "Mount", "RunOutput", "Runtime", "Sandbox", "StderrSink", "get_runtime", "KINDS"]

KINDS = ("container", "exec")
_runtimes: dict[str, Runtime] = {}


def get_runtime(kind: str) -> Runtime:
    """The process-wide runtime for `kind`; imported lazily so exec-only use never loads docker."""
    if kind not in _runtimes:
        if kind == "container":
            from orchestrator.runtimes.container.runtime import ContainerRuntime

            _runtimes[kind] = ContainerRuntime()
        elif kind == "exec":
            from orchestrator.runtimes.host.exec import ExecRuntime

            _runtimes[kind] = ExecRuntime()
        else:
            raise InputError(f"unknown function runtime {kind!r}: use one of {', '.join(KINDS)}")
    return _runtimes[kind]
