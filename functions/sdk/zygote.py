"""A Python fork server for a warm function container: `python3 -m functions.sdk.zygote MODULE`.

A function written with this SDK spends most of a small call importing: the interpreter, the SDK
and the YAML library (~70 ms of a ~90 ms call on a 2-core machine). fnrun's warm containers
(orchestrator/runtimes/container/warm/fnrun-warm.c) start this process once per container, in a
clean state (the container's own environment, no call's data), with those imports done, and hand
it each call of an image whose entrypoint is `python3 -m MODULE`: it forks, and the child runs
MODULE as `__main__` exactly as `python3 -m MODULE ARGS...` would (argv, the call's environment
over the container's, the three streams the helper gave it), then exits with the code the
interpreter would.

What a call can see of this: one more process in /proc (this one; a function cannot trace it or
open its descriptors: it is not dumpable, and each child is made dumpable again for itself),
modules already imported, the hash seed shared with the calls before it in this container, and
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
import importlib
import os
import runpy
import socket
import struct
import sys
import threading

HELPER_FD = 3
PR_SET_DUMPABLE = 4


def main(argv: list[str]) -> int:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0:  # a call must not trace this process
        return 1
    helper = socket.socket(fileno=HELPER_FD)
    _preload(argv[0] if argv else None)
    while True:
        call = _receive(helper)
        if call is None:
            return 0
        streams, args, env = call
        pid = os.fork()
        if pid == 0:
            _child(helper, libc, streams, args, env)
        for fd in streams:
            os.close(fd)
        helper.sendall(b"P" + struct.pack(">L", pid))
        _, status = os.waitpid(pid, 0)
        code = os.waitstatus_to_exitcode(status)
        helper.sendall(b"X" + struct.pack(">L", code if code >= 0 else 128 - code))


def _preload(module: str | None) -> None:
    """What every call would import first. A module that fails to import here fails in its call,
    where its error belongs."""
    try:
        from functions.sdk.resourcelist import new_yaml

        new_yaml().load("{}")
        if module:
            importlib.import_module(module)  # for what it imports: each call runs it anew as __main__
            parent, _, name = module.rpartition(".")
            del sys.modules[module]
            if parent and hasattr(sys.modules.get(parent), name):
                delattr(sys.modules[parent], name)
    except Exception:  # noqa: BLE001 - reported by the call that runs it
        pass


def _receive(helper: socket.socket) -> tuple[list[int], list[str], dict[str, str]] | None:
    """The next call, or None when the helper is gone."""
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
    size = struct.unpack(">L", head)[0]
    body = bytearray()
    while len(body) < size:
        more = helper.recv(size - len(body))
        if not more:
            return None
        body += more
    argc, envc, _ = struct.unpack_from(">LLL", body)
    strings = [os.fsdecode(bytes(text)) for text in bytes(body[12:]).split(b"\0")[: argc + envc]]
    env = dict(entry.partition("=")[::2] for entry in strings[argc:])
    return fds, strings[:argc], env


def _child(helper: socket.socket, libc: ctypes.CDLL, streams: list[int], args: list[str], env: dict[str, str]) -> None:
    code = 70
    try:
        helper.close()
        libc.prctl(PR_SET_DUMPABLE, 1, 0, 0, 0)  # the call's own process, as a cold one would be
        for target, fd in enumerate(streams):
            os.dup2(fd, target)
        for fd in streams:
            if fd > 2:
                os.close(fd)
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
