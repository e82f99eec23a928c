"""Runtimes by kind: "container" (the default, sandboxed) and "exec" (only with --enable-exec)."""

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
