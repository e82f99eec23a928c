"""Run a local executable as a function: same stdin/stdout protocol and timeout as a container.

No sandbox is possible here, which is why exec functions are off unless the user passes
--enable-exec. The child gets its own process group so a timeout or an interrupt kills everything
it spawned, not just the direct child.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from orchestrator.errors import FunctionError, InputError
from orchestrator.runtimes.protocol import Bytes, Invocation, RunOutput, StderrSink, StdoutSink
from orchestrator.runtimes.supervise.interrupts import SignalGuard
from orchestrator.runtimes.supervise.streams import BoundedOutput, LineSplitter, OutputTooLarge, pump, too_large

if TYPE_CHECKING:
    from orchestrator.runtimes.host.forked import ForkedProcess


class ExecRuntime(Bytes):
    """Runtime for `exec:` functions."""

    streams_stdout = True

    def run(self, invocation: Invocation, stdin: bytes, on_stderr: StderrSink | None = None,
            on_stdout: StdoutSink | None = None) -> RunOutput:
        path = _executable(invocation)
        env = {**fnrun_environment(os.environ), **invocation.env}
        cwd = str(invocation.local_dir) if invocation.local_dir is not None else None
        return run_process([str(path), *invocation.args], invocation, env, cwd, stdin, on_stderr, on_stdout=on_stdout)


def run_process(
    argv: list[str],
    invocation: Invocation,
    env: dict[str, str],
    cwd: str | None,
    stdin: bytes,
    on_stderr: StderrSink | None = None,
    confine: Callable[[], None] | None = None,
    spawn: Callable[[], subprocess.Popen[bytes] | ForkedProcess] | None = None,
    on_stdout: StdoutSink | None = None,
) -> RunOutput:
    """Run argv as a function in its own process group: stdin in, stdout capped at --max-output,
    stderr by lines, killed with everything it spawned at the timeout or an interrupt. `confine`
    runs in the child before exec (limits, namespaces; orchestrator.runtimes.host.confine); `spawn`,
    when given, starts the child instead (a fork that runs Python without exec)."""
    started = time.monotonic()
    timeout = invocation.sandbox.timeout
    deadline = started + timeout if timeout else None
    with SignalGuard() as guard:
        if spawn is not None:  # a fork server's child: an interrupt while it starts has the server kill it
            with guard.armed():
                process = spawn()
        else:
            with guard.held():  # the child must not start without us knowing its pid
                process = _spawn(argv, invocation, env, cwd, confine)
        try:
            with guard.armed():
                stdout, stderr = _communicate(process, invocation, stdin, on_stderr, deadline, on_stdout)
                code = _wait(process, invocation, deadline)
        finally:
            with guard.held():
                _kill_group(process)
    return RunOutput(stdout=stdout, stderr=stderr, exit_code=code, duration=time.monotonic() - started)


def fnrun_environment(environ: os._Environ[str] | dict[str, str]) -> dict[str, str]:
    """The environment as if fnrun's own virtualenv were activated.

    `fnrun run DIR --exec functions/x.py` is the SDK's development loop, and its scripts start with
    `#!/usr/bin/env python3`. Run from a virtualenv that is not activated (`.venv/bin/fnrun`),
    that would find the system Python, which lacks the SDK's dependencies. So, like pre-commit and
    tox do for their hooks, the child sees the virtualenv's bin directory first on PATH and
    VIRTUAL_ENV set: Python scripts get the interpreter fnrun runs in; other executables are
    unaffected unless the virtualenv provides a command of the same name. Outside a virtualenv the
    environment is passed on unchanged. `--env PATH=...` (or a declared env) still wins."""
    env = dict(environ)
    if sys.prefix == sys.base_prefix:
        return env
    bin_dir = str(Path(sys.executable).parent)
    rest = [entry for entry in env.get("PATH", os.defpath).split(os.pathsep) if entry and entry != bin_dir]
    env["PATH"] = os.pathsep.join([bin_dir, *rest])
    env["VIRTUAL_ENV"] = sys.prefix
    env.pop("PYTHONHOME", None)
    return env


def _executable(inv: Invocation) -> Path:
    if inv.exec_path is None:
        raise InputError(f"function {inv.name} has no exec path")
    path = Path(inv.exec_path)
    if not path.is_absolute() and inv.local_dir is not None:
        path = Path(inv.local_dir) / path
    if not path.is_file():
        raise InputError(f"exec function {inv.exec_path}: no such file")
    if not os.access(path, os.X_OK):
        raise InputError(f"exec function {inv.exec_path}: not executable (chmod +x it)")
    return path.absolute()  # not resolved: a virtualenv's bin/python finds its packages through its own path


def _spawn(argv: list[str], inv: Invocation, env: dict[str, str], cwd: str | None, confine: Callable[[], None] | None = None) -> subprocess.Popen[bytes]:
    try:
        return subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            cwd=cwd,
            start_new_session=True,
            preexec_fn=confine,
        )
    except OSError as err:  # permission, exec format error, missing interpreter
        what = f"exec function {inv.exec_path}" if inv.exec_path else f"function {inv.name}"
        raise InputError(f"{what}: cannot run it: {err.strerror or err}") from None


def _communicate(
    process: subprocess.Popen[bytes] | ForkedProcess,
    inv: Invocation,
    stdin: bytes,
    on_stderr: StderrSink | None,
    deadline: float | None,
    on_stdout: StdoutSink | None = None,
) -> tuple[bytes, str]:
    assert process.stdin and process.stdout and process.stderr
    out = BoundedOutput(inv.sandbox.max_output)
    err = LineSplitter(on_stderr)
    stdin_fd = process.stdin.fileno()
    try:
        finished = pump(
            stdin_fd,
            stdin,
            lambda chunk: os.write(stdin_fd, chunk),
            process.stdin.close,
            {process.stdout.fileno(): out.feed if on_stdout is None else out.tee(on_stdout), process.stderr.fileno(): err.feed},
            deadline,
        )
    except OutputTooLarge as cap:
        raise too_large(inv.name, cap.limit) from None
    if not finished:
        raise _timed_out(inv)
    return out.value(), err.close()


def _wait(process: subprocess.Popen[bytes] | ForkedProcess, inv: Invocation, deadline: float | None) -> int:
    """Its pipes are closed; a child that lingers past the deadline still counts as timed out."""
    try:
        return process.wait(None if deadline is None else max(0.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        raise _timed_out(inv) from None


def _timed_out(inv: Invocation) -> FunctionError:
    return FunctionError(f"function {inv.name} timed out after {inv.sandbox.timeout:g}s; it was killed")


def _kill_group(process: subprocess.Popen[bytes] | ForkedProcess) -> None:
    """Kill the whole process group (also grandchildren still holding the pipes) and reap.

    The child itself is killed by pid too: a forked builtin makes its own session only once it
    runs, so a timeout that comes first (`--timeout 0.001`) finds no group of that id yet, and a
    child left alive would wait on its stdin while this waits on it. A fork server's child is
    killed by the server, which reaps it (only it knows its pid is still that child's)."""
    if isinstance(process, subprocess.Popen):
        for kill in (os.killpg, os.kill):
            try:
                kill(process.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
    else:
        process.kill_group()
    process.wait()
    for pipe in (process.stdin, process.stdout, process.stderr):
        if pipe is not None:
            try:
                pipe.close()
            except OSError:
                pass
