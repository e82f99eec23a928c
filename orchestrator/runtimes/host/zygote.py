"""The fork server: the one process that forks builtin functions' children, and is
single-threaded whenever it does.

A fork copies only the thread that calls it, but every lock as it stands: forking fnrun itself
while its other threads run (render workers, the streamed decoder, the pre-start pool) can give the
child a lock that thread held (an import's module lock, a stream's, logging's), which no one in
the child will ever release. So fnrun forks this server once, at a moment it has no other thread
(orchestrator.runtimes.host.forked; else it starts it as a new interpreter), and the server, which
never starts a thread, forks a child per call. It imports a function's module before its first
fork, so children start with the code loaded, as a fork of fnrun did.

fnrun asks in the fork servers' one protocol (functions.forkwire) on the control socket: each
call with four descriptors, the child's stdin, stdout and stderr and a reply socket of its own,
and the options only this server honours (working directory, memory limit, hand-over, sys.path).
On the reply socket the server answers that the child started and, once reaped, its exit code;
anything fnrun sends there, or its closing, kills the child (and its process group) if it still
runs. The server reaps, so a pid is only ever signalled by the process that knows it is alive.
When fnrun closes the control socket or dies, or sends what is not a request, the server kills
every child and exits; each child dies with the server (PR_SET_PDEATHSIG), the server with fnrun.
"""

from __future__ import annotations

import ctypes
import gc
import importlib
import json
import os
import runpy
import select
import signal
import socket
import sys
import traceback
from typing import TYPE_CHECKING

from functions import forkwire

if TYPE_CHECKING:
    from orchestrator.runtimes.host.handover import Entry

_PR_SET_PDEATHSIG = 1
_CHILD_FDS = 4  # stdin, stdout, stderr, reply


def die_with_parent(parent: int) -> None:
    """SIGKILL when the parent goes; and at once if it already went (a race with the prctl)."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        pass
    if os.getppid() != parent:
        os._exit(1)


def serve(control: socket.socket, parent: int, modules: list[str] | None = None) -> None:
    """The server's life; it never returns (os._exit). `modules` are imported first (a new
    interpreter's; a fork of fnrun has them already)."""
    die_with_parent(parent)
    for module in modules or ():
        try:
            importlib.import_module(module)
        except Exception:  # noqa: BLE001 - its child will say why, as `python -m` would
            pass
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is fnrun's to handle; it ends this by closing
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    wake_read, wake_write = os.pipe()
    os.set_blocking(wake_write, False)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    signal.set_wakeup_fd(wake_write)
    replies: dict[int, socket.socket] = {}  # child pid -> its reply socket
    running: set[int] = set()  # children not yet reaped (may be signalled)
    entries: dict[str, Entry | None] = {}  # module -> its handover entry (handover.entry_of), found once per server
    poller = select.poll()
    poller.register(control, select.POLLIN)
    poller.register(wake_read, select.POLLIN)
    gc.freeze()  # no collection in a child walks (and so copies) what the server holds
    gc.enable()  # forked from a run that paused it: functions collect as in a fresh interpreter
    try:
        while True:
            for fd, _ in poller.poll():
                if fd == control.fileno():
                    if not _take(control, poller, replies, running, parent, entries):
                        return
                elif fd == wake_read:
                    os.read(wake_read, 512)
                    _reap(replies, running, poller)
                else:
                    _killed_by_request(fd, replies, running, poller)
    finally:
        for pid in running:
            _kill(pid)
        os._exit(0)


def _take(control: socket.socket, poller: select.poll, replies: dict[int, socket.socket], running: set[int], parent: int,
          entries: dict[str, Entry | None]) -> bool:
    """One request: fork its child; False when fnrun closed the control socket."""
    try:
        got = forkwire.receive(control, _CHILD_FDS)
    except (OSError, forkwire.WireError):  # the stream is no longer read in frames: fnrun starts another
        return False
    if got is None:
        return False
    fds, body = got
    try:
        request = forkwire.decode(body)
    except forkwire.WireError:  # closing its reply socket unanswered says it was not started
        for fd in fds:
            os.close(fd)
        return True
    reply = socket.socket(fileno=fds[3])
    try:
        entry = _prepare(request, entries)
    except Exception:  # noqa: BLE001 - the module cannot be imported: its child says why, as `python -m` would
        entry = None
    server = os.getpid()  # taken here: a child asking getppid() after the server died would get 1
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child; what it does is checked through its output
        _child(request, fds[:3], entry, server)
    for fd in fds[:3]:
        os.close(fd)
    running.add(pid)
    replies[pid] = reply
    poller.register(reply, select.POLLIN)
    try:
        reply.sendall(forkwire.answer(forkwire.STARTED, pid))
    except OSError:
        _kill(pid)
    return True


def _prepare(request: forkwire.Call, entries: dict[str, Entry | None]) -> Entry | None:
    """Import the module once in the server (every later child inherits it) and, for a handover,
    find the function its main block runs (once: `entries`)."""
    for entry in request.path:
        if entry not in sys.path:
            sys.path.insert(0, entry)
    if request.module not in sys.modules:
        importlib.import_module(request.module)
        gc.freeze()
    if not request.handover:
        return None
    from orchestrator.runtimes.host import handover

    if request.module in entries:
        return entries[request.module]
    loaded = sys.modules.pop(request.module, None)  # its main block runs as `python -m` runs it
    try:
        entries[request.module] = handover.entry_of(request.module)
        return entries[request.module]
    finally:
        if loaded is not None:
            sys.modules[request.module] = loaded


def _reap(replies: dict[int, socket.socket], running: set[int], poller: select.poll) -> None:
    while running:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        running.discard(pid)
        reply = replies.pop(pid, None)
        if reply is not None:
            try:
                reply.sendall(forkwire.answer(forkwire.EXITED, forkwire.exit_code(status)))
            except OSError:
                pass
            _forget(reply, poller)


def _killed_by_request(fd: int, replies: dict[int, socket.socket], running: set[int], poller: select.poll) -> None:
    """fnrun wrote to, or closed, a reply socket: its child goes (the reaping answers)."""
    for pid, reply in list(replies.items()):
        if reply.fileno() == fd:
            try:
                closed = not reply.recv(16)
            except OSError:
                closed = True
            if pid in running:
                _kill(pid)
            if closed:
                del replies[pid]
                _forget(reply, poller)
            return


def _forget(reply: socket.socket, poller: select.poll) -> None:
    try:
        poller.unregister(reply)
    except (KeyError, ValueError):
        pass
    reply.close()


def _kill(pid: int) -> None:
    """The child's group (it made its own session) and the child, which may not have yet."""
    for kill in (os.killpg, os.kill):
        try:
            kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def _child(request: forkwire.Call, fds: list[int], entry: Entry | None, server: int) -> None:
    code = 1
    try:
        os.setsid()
        signal.set_wakeup_fd(-1)
        for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGPIPE, signal.SIGCHLD):
            signal.signal(signum, signal.SIG_DFL)
        die_with_parent(server)
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
        os.closerange(3, 1 << 16)
        sys.stdin = open(0, encoding="utf-8", closefd=False)
        sys.stdout = open(1, "w", encoding="utf-8", closefd=False)
        sys.stderr = open(2, "w", encoding="utf-8", closefd=False, errors="backslashreplace")
        from orchestrator.runtimes.host.confine import confinement

        confinement(request.memory)(_data_in_use())
        if request.cwd is not None:
            os.chdir(request.cwd)
        os.environ.clear()
        os.environ.update(request.env)
        sys.argv = [request.module, *request.args]
        module = sys.modules.pop(request.module, None)  # run afresh as __main__; its imports stay loaded
        try:
            if module is None:
                importlib.import_module(request.module)  # its ImportError, as `python -m` shows one
                sys.modules.pop(request.module, None)
            if request.handover:
                from orchestrator.runtimes.host.handover import HandedOver

                with open(0, "rb", closefd=False) as raw:  # the hand-over's JSON, as bytes
                    sent = json.load(raw)
                HandedOver(sent["items"], sent["config"], entry).install()
            runpy.run_module(request.module, run_name="__main__", alter_sys=True)
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
    """Bytes of data segment this process already has (a child's memory limit comes on top)."""
    return memory_in_use(5)


def memory_in_use(field: int) -> int:
    """Bytes of this process's memory by /proc/self/statm's `field` (1 resident, 5 data); 0 unknown."""
    try:
        with open("/proc/self/statm") as handle:
            return int(handle.read().split()[field]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, IndexError, ValueError):
        return 0


if __name__ == "__main__":  # started as a new interpreter: the control socket is descriptor argv[1]
    serve(socket.socket(fileno=int(sys.argv[1])), int(sys.argv[2]), sys.argv[3:])
