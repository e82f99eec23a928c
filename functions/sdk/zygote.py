"""A Python fork server for a warm function container: `python3 -m functions.sdk.zygote MODULE`.

A function written with this SDK spends most of a small call importing: the interpreter, the SDK
and the YAML library (~70 ms of a ~90 ms call on a 2-core machine). fnrun's warm containers
(orchestrator/runtimes/container/warm/fnrun-warm.c) start this process once per container, in a
clean state (the container's own environment, no call's data), with those imports done, and hand
it each call of an image whose entrypoint is `python3 -m MODULE`: it forks, and the child runs
MODULE as `__main__` exactly as `python3 -m MODULE ARGS...` would (argv, the call's environment
over the container's, the three streams the helper gave it), then exits with the code the
interpreter would.

This process never runs the function's own code: MODULE is imported in each call's child, never
here. Whatever a module does at import (open a memfd or a socket, map memory shared, attach a
System V segment, start a thread or a process) would otherwise be handed down to every later call
and carry one call's data to the next. What this process does hold is checked before each fork:
no descriptor but its own four, no shared mapping, no System V segment attached, no thread but its
own, no child; anything else (code the image's interpreter runs at start-up, sitecustomize or a
.pth file) makes it refuse to serve, and the helper starts each call as a new process instead.
The child closes every descriptor but its three streams before anything else runs. A call's
arguments and environment are decoded only in its child; this process wipes the buffer they
came in, so no later child finds them in memory it inherited.

What a call can see of this: one more process in /proc (this one; a function cannot trace it or
open its descriptors: it is not dumpable, and each child is made dumpable again for itself),
the SDK already imported, the hash seed shared with the calls before it in this container, and
/proc/self/environ holding the container's environment (os.environ holds the call's). Nothing of an
earlier call reaches a later one: each runs in its own child, which the helper kills with all it
started, and this process never runs a call's code or reads its data.

fd 3 is a socket to the helper. Each call comes as a 4-byte big-endian length carrying the call's
stdin, stdout and stderr (SCM_RIGHTS), then that many bytes: u32 argc, u32 envc, u32 0, then argc +
envc NUL-terminated strings. The answers are 5 bytes each: b"P" + the child's pid once forked,
b"X" + its exit code once reaped (128 + the signal that killed it).
"""

from __future__ import annotations

import atexit
import ctypes
import os
import runpy
import socket
import struct
import sys
import threading
from pathlib import Path

HELPER_FD = 3
PR_SET_DUMPABLE = 4
WALL = 0x40000000  # __WALL: every child, whatever exit signal it was made with
MAX_FD = 1 << 30  # closerange's end: close_range(2) takes the whole span at once


def main(argv: list[str]) -> int:
    """Serve calls until the helper goes. argv names the function's module, which only the helper
    reads (to tell whether a call may use this server): it is never imported here."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0:  # a call must not trace this process
        return 1
    helper = socket.socket(fileno=HELPER_FD)
    _preload()
    while True:
        call = _receive(helper)
        if call is None:
            return 0
        streams, body = call
        unclean = _unclean(streams)
        if unclean is not None:  # the helper starts this call, and every later one, as a new process
            print(f"fnrun fork server: not serving: {unclean}", file=sys.stderr)
            return 1
        pid = os.fork()
        if pid == 0:
            _child(helper, libc, streams, body)
        _wipe(body)
        for fd in streams:
            os.close(fd)
        helper.sendall(b"P" + struct.pack(">L", pid))
        _, status = os.waitpid(pid, 0)
        code = os.waitstatus_to_exitcode(status)
        helper.sendall(b"X" + struct.pack(">L", code if code >= 0 else 128 - code))


def _preload() -> None:
    """What every call would import first: the SDK and the YAML library, never the function's own
    module (see above). A failure here is the call's to report, where its error belongs."""
    try:
        from functions.sdk.resourcelist import new_yaml

        new_yaml().load("{}")
    except Exception:  # noqa: BLE001 - reported by the call that runs it
        pass


def _unclean(streams: list[int]) -> str | None:
    """What this process holds that a forked call would inherit and no cold process has, or None."""
    _reap()
    own = {0, 1, 2, HELPER_FD, *streams}
    extra = [fd for fd in _open_fds() if fd not in own]
    if extra:
        return f"descriptors {extra} are open"
    tasks = os.listdir("/proc/self/task")
    if len(tasks) != 1:
        return f"it runs {len(tasks)} threads"
    try:
        children = Path(f"/proc/self/task/{tasks[0]}/children").read_text().split()
    except OSError:  # a kernel without the list: a child is found by its parent's id
        children = [pid for pid in os.listdir("/proc") if pid.isdigit() and _parent(pid) == os.getpid()]
    if children:
        return f"it has child processes {children}"
    with open("/proc/self/maps", encoding="utf-8", errors="replace") as maps:
        for line in maps:
            fields = line.split(None, 5)
            if len(fields) > 1 and fields[1][3:4] == "s" and not _read_only(fields[1], fields[5].strip() if len(fields) > 5 else ""):
                return f"a shared mapping {fields[5].strip() if len(fields) > 5 else fields[0]}"
    return None


def _read_only(perms: str, path: str) -> bool:
    """Whether a shared mapping can carry nothing from a call: not writable, of a file that still
    exists and that no process of this user can write (glibc maps its gconv cache so, from the
    read-only root). A file in /tmp or /dev/shm, the only places a call can write, is writable or,
    once the helper emptied them before this call, deleted; anonymous shared memory, a memfd and a
    System V segment show as deleted files."""
    return "w" not in perms and path.startswith("/") and not path.endswith("(deleted)") and not os.access(path, os.W_OK)


def _open_fds() -> list[int]:
    found = []
    for name in os.listdir("/proc/self/fd"):
        try:
            os.fstat(int(name))  # the listing's own descriptor is closed by now
        except OSError:
            continue
        found.append(int(name))
    return found


def _parent(pid: str) -> int | None:
    try:
        return int(Path(f"/proc/{pid}/stat").read_bytes().rpartition(b")")[2].split()[1])
    except (OSError, ValueError, IndexError):
        return None


def _reap() -> None:
    """Reap every child that has ended, whatever signal it reports its end with."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG | WALL)
        except ChildProcessError:
            return
        if pid == 0:
            return


def _receive(helper: socket.socket) -> tuple[list[int], bytearray] | None:
    """The next call's streams and its arguments and environment, undecoded; None when the
    helper is gone."""
    head, fds, _, _ = socket.recv_fds(helper, 4, 3)
    while head and len(head) < 4:
        more = helper.recv(4 - len(head))
        if not more:
            break
        head += more
    if len(head) < 4 or len(fds) != 3:
        for fd in fds:
            os.close(fd)
        return None
    body = bytearray(struct.unpack(">L", head)[0])
    with memoryview(body) as view:
        got = 0
        while got < len(body):
            count = helper.recv_into(view[got:])
            if not count:
                _wipe(body)
                return None
            got += count
    return fds, body


def _wipe(body: bytearray) -> None:
    """Zero a call's arguments and environment in place: freed, the buffer would keep them for the
    next child to find."""
    body[:] = bytes(len(body))


def _decode(body: bytearray) -> tuple[list[str], dict[str, str]]:
    """u32 argc, u32 envc, u32 0, then argc + envc NUL-terminated strings."""
    argc, envc, _ = struct.unpack_from(">LLL", body)
    strings = [os.fsdecode(text) for text in bytes(body[12:]).split(b"\0")[: argc + envc]]
    return strings[:argc], dict(entry.partition("=")[::2] for entry in strings[argc:])


def _child(helper: socket.socket, libc: ctypes.CDLL, streams: list[int], body: bytearray) -> None:
    code = 70
    try:
        helper.close()
        libc.prctl(PR_SET_DUMPABLE, 1, 0, 0, 0)  # the call's own process, as a cold one would be
        for target, fd in enumerate(streams):
            os.dup2(fd, target)
        os.closerange(3, MAX_FD)  # its three streams and nothing else, as a cold process starts
        args, env = _decode(body)
        os.environ.update(env)
        # args: python3 -m MODULE ARGS...; runpy puts the module's file in argv[0], as -m does
        sys.argv = [args[2], *args[3:]]
        code = _run(args[2])
    finally:
        os._exit(code)


def _run(module: str) -> int:
    """Run `module` as __main__ and end as the interpreter would: its exit code, a traceback and 1
    for an uncaught exception, non-daemon threads joined, atexit handlers run, streams flushed."""
    try:
        runpy.run_module(module, run_name="__main__", alter_sys=True)
        code = 0
    except SystemExit as done:
        code = _exit_code(done.code)
    except BaseException:  # noqa: BLE001 - what the interpreter would print and exit 1 for
        sys.excepthook(*sys.exc_info())
        code = 1
    for thread in threading.enumerate():
        if thread is not threading.current_thread() and not thread.daemon:
            thread.join()
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            code = code or 120  # the interpreter's code when flushing stdout fails at exit
    return code


def _exit_code(value: object) -> int:
    if value is None:
        return 0
    if isinstance(value, int):
        return value & 0xFF
    print(value, file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
