"""A builtin function in a fork instead of a new interpreter: a builtin without the cost of
starting one.

Starting `python -m functions.x` costs 80–150 ms here (interpreter, site, ruamel); a fork of a
process that has already imported the function's module and its dependencies costs a few. fnrun
never forks itself for this while it may have other threads (see the fork server,
orchestrator.runtimes.host.zygote): `ForkServer.start` forks the server when this process has one thread
(a run's session calls it before any other thread starts, with the modules the run will need
imported first), else starts it as a new interpreter; `spawn` asks it for a child, and the run's
end stops it (its owner, runtimes.Registry, holds one per run or per server). The child is
confined the same way (orchestrator.runtimes.host.confine), gets only the environment the
container would, its own pipes, default signal handlers and its own session, then runs the
module as `__main__` and leaves with os._exit.

Modules whose imports start threads of their own (starlark-go starts the Go runtime) never run
in the server, whose forks would then inherit those threads' locks: they run through a new
interpreter.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import IO

from functions import forkwire
from orchestrator.errors import FunctionError
from orchestrator.runtimes.container import live
from orchestrator.runtimes.host.zygote import die_with_parent, memory_in_use, serve
from orchestrator.runtimes.supervise import children

#: Modules that must start in a fresh interpreter (their imports start runtime threads).
NEEDS_OWN_INTERPRETER = ("starlark",)
#: How long the server may take to fork a child (it imports a module first, once).
ANSWER_WITHIN = 60.0
#: Resident bytes above which the server is a new interpreter rather than a fork of fnrun: a fork
#: shares fnrun's pages for the whole run, and each page fnrun then writes (a reference count
#: will do) is copied, which for a big package's heap costs its size again.
FORK_BELOW = 160 << 20


def can_fork(module: str, functions_dir: Path) -> bool:
    """Whether `module` can run in a fork: Linux, a module of this fnrun's functions package, and
    no threads of its own (whether the user lets it, FNRUN_BUILTIN_FORK, is the caller's to ask)."""
    if sys.platform != "linux":
        return False
    if any(part in module for part in NEEDS_OWN_INTERPRETER):
        return False
    spec = importlib.util.find_spec(module.split(".", 1)[0])
    origin = Path(spec.origin).resolve().parent if spec and spec.origin else None
    return origin == functions_dir.resolve()  # the code hashed is the code run


class ForkedProcess:
    """What the exec runner needs of a child (`subprocess.Popen`'s pid, pipes and wait), plus
    `kill_group`: only the server, which reaps it, may signal its pid."""

    def __init__(self, pid: int, stdin: IO[bytes], stdout: IO[bytes], stderr: IO[bytes], reply: socket.socket) -> None:
        self.pid, self.stdin, self.stdout, self.stderr = pid, stdin, stdout, stderr
        self.reply = reply
        self.returncode: int | None = None

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None:
            try:
                answer = forkwire.read_answer(self.reply, timeout)
            except forkwire.WireError:  # the server is gone, and the child died with it
                answer = (forkwire.EXITED, 128 + signal.SIGKILL)
            if answer is None:
                raise subprocess.TimeoutExpired(f"builtin {self.pid}", timeout or 0)
            letter, code = answer
            self.returncode = code if letter == forkwire.EXITED else 128 + signal.SIGKILL
            self.reply.close()
        return self.returncode

    def kill_group(self) -> None:
        """Ask the server to kill the child and its group; `wait` then returns its status."""
        if self.returncode is None:
            try:
                self.reply.send(forkwire.KILL)
            except OSError:  # the server is gone, and the child with it
                pass


class _Server:
    def __init__(self, pid: int, control: socket.socket, process: subprocess.Popen[bytes] | None) -> None:
        self.pid, self.control, self.process = pid, control, process
        self.sending = threading.Lock()

    def stop(self) -> None:
        """Kill the server; its children die with it (PR_SET_PDEATHSIG). It is reaped now, or
        under fnrun's launcher after the package is written (live.wait_later): the kernel's
        teardown of a fork of fnrun takes a millisecond or two, which a run need not wait for."""
        try:
            os.kill(self.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.control.close()
        live.wait_later(self._reap)

    def _reap(self) -> None:
        try:
            os.waitpid(self.pid, 0)
        except ChildProcessError:
            pass


class ForkServer:
    """The host fork server of one run (or of one `fnrun serve`, for its life): started by
    `start`, asked for children by `spawn`, ended with every child it has by `stop`, which its
    owner calls when the run ends (and an interrupted run's stop, through supervise.children)."""

    def __init__(self) -> None:
        self._server: _Server | None = None
        self._starting = threading.Lock()

    @property
    def pid(self) -> int | None:
        """The server's process id while it runs (for tests and reports)."""
        server = self._server
        return server.pid if server is not None else None

    def start(self, modules: Iterable[str] = ()) -> None:
        """Have the server ready. When this process has no other thread and a small heap, it is
        a fork of this process with `modules` imported first (so every child starts with them
        loaded); otherwise a new interpreter (a fork now could inherit a lock another thread
        holds, or would share a big heap, see FORK_BELOW), which imports a module at its first use."""
        with self._starting:
            if self._server is not None:
                return
            ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
            process = None
            modules = list(modules)
            if _single_threaded() and memory_in_use(1) < FORK_BELOW:
                for module in modules:
                    importlib.import_module(module)
                parent = os.getpid()
                pid = os.fork()
                if pid == 0:  # pragma: no cover - the server; checked through the children it forks
                    _become_server(theirs, ours, parent)
            else:
                env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
                process = subprocess.Popen(
                    [sys.executable, "-s", "-m", "orchestrator.runtimes.host.zygote", str(theirs.fileno()), str(os.getpid()), *modules],
                    pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, env=env, close_fds=True)
                pid = process.pid
            theirs.close()
            self._server = _Server(pid, ours, process)
        children.register(self.stop)

    def stop(self) -> None:
        """End the server and every child it has (the run's end, an interrupted run; a test that
        changed what a child must inherit). A later `spawn` starts another."""
        with self._starting:
            server, self._server = self._server, None
        children.unregister(self.stop)
        if server is not None:
            server.stop()

    def spawn(self, module: str, args: list[str], env: dict[str, str], cwd: str, memory: int, handover: bool = False,
              timeout: float | None = None, name: str | None = None) -> ForkedProcess:
        """A child of the server running `module` as `python -m module args` would; with
        `handover`, its stdin carries the items as JSON for the SDK's runner
        (orchestrator.runtimes.host.handover). A function's `timeout` (seconds) covers its start
        too: function `name` timed out when the server has not forked it by then."""
        try:
            request = forkwire.encode(forkwire.Call(module, tuple(args), dict(env), cwd, memory, handover, tuple(p for p in sys.path if p)))
        except forkwire.WireError as err:
            raise FunctionError(f"function {name or module}: cannot be forked: {err}") from None
        for attempt in (1, 2):
            self.start()
            server = self._server
            if server is None:
                continue
            try:
                return _ask(server, request, timeout or ANSWER_WITHIN, name or module, bool(timeout), self._discard)
            except (BrokenPipeError, ConnectionError):  # the server died (stopped by an interrupt, or killed): discarded
                if attempt == 2:
                    raise FunctionError(f"function {module}: the fork server is gone") from None
        raise FunctionError(f"function {module}: no fork server")

    def _discard(self, server: _Server) -> None:
        """Stop `server` for good: a request cut inside its frame (an interrupt, a server gone)
        leaves its stream unreadable in frames. The next `spawn` starts another."""
        with self._starting:
            if self._server is server:
                self._server = None
        server.stop()


def _ask(server: _Server, request: bytes, within: float, name: str, timed: bool, discard: Callable[[_Server], None]) -> ForkedProcess:
    pipes = [os.pipe() for _ in range(3)]  # stdin, stdout, stderr: (read end, write end)
    reply, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    ends = [pipes[0][0], pipes[1][1], pipes[2][1], theirs.fileno()]
    try:
        with server.sending:
            try:
                forkwire.send(server.control, request, ends)
            except BaseException:  # maybe cut inside the frame: no later request could be read
                discard(server)
                raise
    except BaseException:
        for fd in (pipes[0][1], pipes[1][0], pipes[2][0]):
            os.close(fd)
        reply.close()
        raise
    finally:
        for fd in ends[:3]:
            os.close(fd)
        theirs.close()
    try:
        try:
            answer = forkwire.read_answer(reply, within)
        except forkwire.WireError:  # the server closed the reply socket unanswered
            answer = (b"", 0)
        if answer is None and timed:
            raise FunctionError(f"function {name} timed out after {within:g}s; it was killed")
        if answer is None or answer[0] != forkwire.STARTED:
            raise FunctionError(f"function {name}: the fork server did not start it")
    except BaseException:  # an interrupt too: closing the reply socket makes the server kill it
        reply.close()
        for fd in (pipes[0][1], pipes[1][0], pipes[2][0]):
            os.close(fd)
        raise
    return ForkedProcess(answer[1], os.fdopen(pipes[0][1], "wb", 0), os.fdopen(pipes[1][0], "rb", 0), os.fdopen(pipes[2][0], "rb", 0), reply)


def _single_threaded() -> bool:
    """No other thread in this process, counted by the kernel (a Go runtime's threads included)."""
    try:
        return len(os.listdir("/proc/self/task")) == 1
    except OSError:
        return threading.active_count() == 1 and "starlark_go" not in sys.modules


def _become_server(control: socket.socket, other_end: socket.socket, parent: int) -> None:  # pragma: no cover - in the server
    """The forked server: fnrun's descriptors closed (it must hold no pipe fnrun waits on) but
    its stderr, for a traceback should there be one; then serve."""
    try:
        die_with_parent(parent)
        other_end.close()
        null = os.open(os.devnull, os.O_RDWR)
        os.dup2(null, 0)
        os.dup2(null, 1)
        keep = control.fileno()
        os.closerange(3, keep)
        os.closerange(keep + 1, 1 << 16)
        serve(control, parent)
    finally:
        os._exit(1)

