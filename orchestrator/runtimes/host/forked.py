"""A builtin function in a fork of this interpreter instead of a new one: a builtin
without the cost of starting an interpreter.

Starting `python -m functions.x` costs 80–150 ms here (interpreter, site, ruamel); a fork of fnrun,
which has already imported the function's module and its dependencies, costs a few. The child is
confined the same way (orchestrator.runtimes.host.confine), gets only the environment the container
would, fresh standard streams on its own pipes (the parent's stream objects may hold locks another
thread took), default signal handlers and its own session, then runs the module as `__main__`
and leaves with os._exit (no atexit handlers or finalizers of the parent run twice).

Modules whose imports start threads of their own (starlark-go starts the Go runtime) are never
imported here: a fork keeps only the forking thread, so those run through a new interpreter.
"""

from __future__ import annotations

import gc
import importlib
import importlib.util
import os
import runpy
import select
import signal
import subprocess
import sys
import threading
import time
import traceback
from pathlib import Path
from typing import IO, Callable

#: Held around every fork: what must not leak into a child is set up under it
#: (orchestrator.runtimes.host.handover names a module's function with a transport of its own).
FORK_LOCK = threading.Lock()
#: Modules that must start in a fresh interpreter (their imports start runtime threads).
NEEDS_OWN_INTERPRETER = ("starlark",)
_THREADED_RUNTIMES = ("starlark_go",)


def can_fork(module: str, functions_dir: Path) -> bool:
    """Whether `module` can run in a fork: Linux, a module of this fnrun's functions package, and
    nothing loaded that a fork would break."""
    if sys.platform != "linux" or os.environ.get("FNRUN_BUILTIN_FORK", "1") == "0":
        return False
    if any(part in module for part in NEEDS_OWN_INTERPRETER) or any(m in sys.modules for m in _THREADED_RUNTIMES):
        return False
    spec = importlib.util.find_spec(module.split(".", 1)[0])
    origin = Path(spec.origin).resolve().parent if spec and spec.origin else None
    return origin == functions_dir.resolve()  # the code hashed is the code run


class ForkedProcess:
    """What the exec runner needs of a child (`subprocess.Popen`'s pid, pipes and wait)."""

    def __init__(self, pid: int, stdin: IO[bytes], stdout: IO[bytes], stderr: IO[bytes]) -> None:
        self.pid, self.stdin, self.stdout, self.stderr = pid, stdin, stdout, stderr
        self.returncode: int | None = None

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None and timeout is not None and not self._exits_within(timeout):
            raise subprocess.TimeoutExpired(f"builtin {self.pid}", timeout)
        if self.returncode is None:
            self.returncode = os.waitstatus_to_exitcode(os.waitpid(self.pid, 0)[1])
        return self.returncode

    def _exits_within(self, timeout: float) -> bool:
        """Whether the child exits within `timeout`: told by a pidfd the moment it does (a step
        costs milliseconds, so polling would add a good part of one), else polled."""
        try:
            pidfd = os.pidfd_open(self.pid)
        except (AttributeError, OSError):  # kernels before 5.3
            return self._polled(timeout)
        try:
            poller = select.poll()  # not select(): an fd past 1024 is fine
            poller.register(pidfd, select.POLLIN)
            return bool(poller.poll(max(0.0, timeout) * 1000))
        finally:
            os.close(pidfd)

    def _polled(self, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while True:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.returncode = os.waitstatus_to_exitcode(status)
                return True
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.002)


def spawn(module: str, args: list[str], env: dict[str, str], cwd: str, confine: Callable[[int], None],
          prepare: Callable[[], None] | None = None) -> ForkedProcess:
    """Fork a child that runs `module` as `python -m module args` would; `prepare` runs in the
    child, confined, just before the module (orchestrator.runtimes.host.handover installs itself)."""
    importlib.import_module(module)  # once per fnrun process; every fork inherits it
    budget = _data_in_use()
    pipes = [os.pipe() for _ in range(3)]  # stdin, stdout, stderr: (read end, write end)
    # Every object goes to the collector's permanent generation first, as the gc module advises
    # for a fork that does not exec: no collection in the child walks (and so copies) the
    # parent's pages. It stays frozen until the next run starts (run.session unfreezes), which
    # also spares the interpreter's final collections at exit from walking it (~10 ms).
    gc.freeze()
    with FORK_LOCK:
        pid = os.fork()
    if pid == 0:  # pragma: no cover - the child; what it does is checked through its output
        _child(module, args, env, cwd, confine, pipes, budget, prepare)
    os.close(pipes[0][0])
    os.close(pipes[1][1])
    os.close(pipes[2][1])
    return ForkedProcess(pid, os.fdopen(pipes[0][1], "wb", 0), os.fdopen(pipes[1][0], "rb", 0), os.fdopen(pipes[2][0], "rb", 0))


def _child(module: str, args: list[str], env: dict[str, str], cwd: str, confine: Callable[[int], None],
           pipes: list[tuple[int, int]], inherited: int, prepare: Callable[[], None] | None = None) -> None:
    code = 1
    try:
        os.setsid()
        for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGPIPE, signal.SIGCHLD):
            signal.signal(signum, signal.SIG_DFL)
        os.dup2(pipes[0][0], 0)
        os.dup2(pipes[1][1], 1)
        os.dup2(pipes[2][1], 2)
        os.closerange(3, 1 << 16)
        sys.stdin = open(0, encoding="utf-8", closefd=False)
        sys.stdout = open(1, "w", encoding="utf-8", closefd=False)
        sys.stderr = open(2, "w", encoding="utf-8", closefd=False, errors="backslashreplace")
        confine(inherited)
        os.chdir(cwd)
        os.environ.clear()
        os.environ.update(env)
        sys.argv = [module, *args]
        sys.modules.pop(module, None)  # run afresh as __main__; its imports stay loaded
        try:
            if prepare is not None:
                prepare()
            runpy.run_module(module, run_name="__main__", alter_sys=True)
            code = 0
        except SystemExit as done:
            code = done.code if isinstance(done.code, int) else (0 if done.code is None else _say(str(done.code)))
        except BaseException:  # noqa: BLE001 - what the interpreter would print, then exit 1
            traceback.print_exc()
            code = 1
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:  # noqa: BLE001 - a closed pipe: the parent has stopped reading
                pass
    finally:
        os._exit(code)


def _say(message: str) -> int:
    print(message, file=sys.stderr)
    return 1


def _data_in_use() -> int:
    """Bytes of data segment this process already has (a fork's memory limit comes on top)."""
    try:
        with open("/proc/self/statm") as handle:
            return int(handle.read().split()[5]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, IndexError, ValueError):
        return 0
