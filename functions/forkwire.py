"""The one wire protocol of fnrun's two fork servers: how a call is asked for and answered.

Two processes fork a Python function's child instead of starting an interpreter, and both speak
this protocol: the image's fork server (functions/sdk/zygote.py), asked by the warm helper, a
static C program (orchestrator/runtimes/container/warm/fnrun-warm.c), in a warm container; and
the host's fork server (orchestrator/runtimes/host/zygote.py), asked by fnrun itself
(orchestrator/runtimes/host/forked.py) for builtins. This module lives in `functions/`, which
every function image holds (fnrun's `orchestrator/` may not be there), and outside `functions.sdk`,
whose import loads the SDK and the YAML library: fnrun must not pay that to start a container.
Standard library only.

Framing, on a Unix stream socket: a request is a 4-byte big-endian length, sent in one sendmsg
with the call's descriptors attached (SCM_RIGHTS), then that many bytes of body, at most
MAX_BODY. Stream, not datagrams (SOCK_SEQPACKET): the warm helper already sends it so on a stream
socketpair, and a frame that states its own length is checked before anything is allocated (an
oversized length is refused unread), while a datagram larger than the receiver's buffer would be
cut short silently. A peer gone mid-frame is a short read, refused, never a wait.

Descriptors: the child's stdin, stdout and stderr; a server that runs several children at once
(the host's) takes a fourth, the call's own reply socket, and kills the child when the caller
writes to that socket (KILL) or closes it.

Body: u32 argc, u32 envc, u32 optc (all big-endian), then argc + envc + optc NUL-terminated
UTF-8 strings (surrogateescape for bytes that are not), and nothing after them:
  argv     the command, `python3 -m MODULE ARGS...`: the child runs MODULE as `__main__` with
           sys.argv = [MODULE, *ARGS], as that command would
  env      NAME=VALUE, the call's environment
  options  NAME=VALUE, what the host's server honours and the image's refuses (the warm helper
           sends none, optc 0): `cwd=DIR`, `memory=BYTES` (decimal, 0 for no limit), `handover=1`
           (stdin carries the items as JSON for the SDK's runner), `path=ENTRY` (sys.path entries
           the module may need, in order; repeated). Each but `path` at most once.

Answers, 5 bytes each, on the reply socket or, without one, the request socket: b"P" and the
child's pid as u32 once forked; b"X" and its exit code as u32 once reaped: its exit status, or
128 + the signal that ended it, as a shell and a container engine report it.
"""

from __future__ import annotations

import os
import select
import socket
import struct
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

#: The largest body a server reads (the warm helper's own cap on a call's argv and environment).
MAX_BODY = 1 << 20
STARTED = b"P"
EXITED = b"X"
#: What fnrun writes on a call's reply socket to have the host's server kill the child.
KILL = b"k"
ANSWER = struct.Struct(">cL")
_LENGTH = struct.Struct(">L")
_COUNTS = struct.Struct(">LLL")
_FLAGS = {"0": False, "1": True}


class WireError(Exception):
    """A frame or body this protocol does not allow; the message says what is wrong with it."""


@dataclass(frozen=True)
class Call:
    """One call: the module to run as `__main__`, its arguments and environment, and the options
    only the host's server honours."""

    module: str
    args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    cwd: str | None = None
    memory: int = 0
    handover: bool = False
    path: tuple[str, ...] = ()

    def options(self) -> list[str]:
        found = [] if self.cwd is None else [f"cwd={self.cwd}"]
        found += [f"memory={self.memory}"] if self.memory else []
        found += ["handover=1"] if self.handover else []
        return found + [f"path={entry}" for entry in self.path]


def encode(call: Call) -> bytes:
    """The body of `call`; WireError when a string holds a NUL or the body is over MAX_BODY."""
    return pack(["python3", "-m", call.module, *call.args], call.env, call.options())


def pack(argv: Sequence[str], env: Mapping[str, str], third: Sequence[str]) -> bytes:
    """A body of the layout above, whatever its strings mean: the warm helper's start frame holds
    one whose third group is the image fork server's command (not options), which the helper cuts
    off before it relays the rest to that server as its request. WireError when a string holds a
    NUL or the body is over MAX_BODY."""
    strings = [*argv, *(f"{name}={value}" for name, value in env.items()), *third]
    if any("\0" in text for text in strings):
        raise WireError("an argument, variable or option holds a NUL byte")
    body = _COUNTS.pack(len(argv), len(env), len(third)) + b"".join(
        text.encode("utf-8", "surrogateescape") + b"\0" for text in strings)
    if len(body) > MAX_BODY:
        raise WireError(f"a call of {len(body)} bytes is over the {MAX_BODY} a fork server reads")
    return body


def decode(body: bytes | bytearray) -> Call:
    """The call a body holds; WireError for anything the format above does not allow. One pass,
    each string copied once."""
    if len(body) < _COUNTS.size:
        raise WireError(f"a body of {len(body)} bytes has no counts")
    argc, envc, optc = _COUNTS.unpack_from(body)
    if argc + envc + optc > len(body) - _COUNTS.size:  # each string takes at least its NUL
        raise WireError(f"a body of {len(body)} bytes cannot hold {argc + envc + optc} strings")
    strings, at = [], _COUNTS.size
    for _ in range(argc + envc + optc):
        end = body.find(b"\0", at)
        if end < 0:
            raise WireError("a string has no NUL at its end")
        strings.append(bytes(body[at:end]).decode("utf-8", "surrogateescape"))
        at = end + 1
    if at != len(body):
        raise WireError(f"{len(body) - at} bytes follow the last string")
    argv = strings[:argc]
    if len(argv) < 3 or argv[1] != "-m" or not argv[2]:
        raise WireError("the command is not `python3 -m MODULE ...`")
    env = dict(_pairs(strings[argc:argc + envc], "variable"))
    return _with_options(Call(argv[2], tuple(argv[3:]), env), _pairs(strings[argc + envc:], "option"))


def _pairs(entries: list[str], what: str) -> list[tuple[str, str]]:
    pairs = []
    for entry in entries:
        name, sep, value = entry.partition("=")
        if not sep or not name:
            raise WireError(f"{what} {entry[:60]!r} is not NAME=VALUE")
        pairs.append((name, value))
    return pairs


def _with_options(call: Call, options: list[tuple[str, str]]) -> Call:
    seen: set[str] = set()
    cwd, memory, handover, path = None, 0, False, []
    for name, value in options:
        if name in seen and name != "path":
            raise WireError(f"option {name} is given twice")
        seen.add(name)
        if name == "cwd":
            cwd = value
        elif name == "memory":
            if not value.isascii() or not value.isdigit() or len(value) > 20:
                raise WireError(f"option memory={value[:30]!r} is not a number of bytes")
            memory = int(value)
        elif name == "handover":
            if value not in _FLAGS:
                raise WireError(f"option handover={value[:30]!r} is not 0 or 1")
            handover = _FLAGS[value]
        elif name == "path":
            path.append(value)
        else:
            raise WireError(f"unknown option {name[:30]!r}")
    return Call(call.module, call.args, call.env, cwd, memory, handover, tuple(path))


def send(sock: socket.socket, body: bytes, fds: list[int]) -> None:
    """One request: its length with the descriptors, then its body (the caller keeps other
    senders on `sock` out meanwhile)."""
    if len(body) > MAX_BODY:
        raise WireError(f"a call of {len(body)} bytes is over the {MAX_BODY} a fork server reads")
    if socket.send_fds(sock, [_LENGTH.pack(len(body))], fds) != _LENGTH.size:
        raise ConnectionError("the fork server took part of a request's length")
    sock.sendall(body)


def receive(sock: socket.socket, descriptors: int) -> tuple[list[int], bytearray] | None:
    """The next request's descriptors and body (a bytearray, so a server can wipe it); None when
    the peer closed the socket between requests. WireError, with every descriptor that came
    closed, for a frame with other than `descriptors` descriptors, a length over MAX_BODY, or an
    end inside the frame: the stream can then no longer be read in frames."""
    head, fds, _, _ = socket.recv_fds(sock, _LENGTH.size, descriptors + 1)
    if not head and not fds:
        return None
    try:
        head += _exactly(sock, _LENGTH.size - len(head))
        if len(fds) != descriptors:
            raise WireError(f"a request came with {len(fds)} descriptors, not {descriptors}")
        length = _LENGTH.unpack(head)[0]
        if length > MAX_BODY:
            raise WireError(f"a request of {length} bytes is over the {MAX_BODY} a fork server reads")
        body = bytearray(length)
        with memoryview(body) as view:
            got = 0
            while got < length:
                more = sock.recv_into(view[got:])
                if not more:
                    body[:] = bytes(length)
                    raise WireError(f"the request ended after {got} of its {length} bytes")
                got += more
    except BaseException:
        for fd in fds:
            os.close(fd)
        raise
    return fds, body


def _exactly(sock: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        more = sock.recv(size - len(data))
        if not more:
            raise WireError(f"the request ended inside its {_LENGTH.size}-byte length")
        data += more
    return data


def answer(letter: bytes, value: int) -> bytes:
    """An answer: STARTED with a pid, EXITED with an exit code (exit_code)."""
    return ANSWER.pack(letter, value)


def exit_code(status: int) -> int:
    """A wait status as the answer carries it: the exit status, or 128 + the ending signal."""
    code = os.waitstatus_to_exitcode(status)
    return code if code >= 0 else 128 - code


def read_answer(sock: socket.socket, timeout: float | None) -> tuple[bytes, int] | None:
    """The next answer as (letter, value); None when none came within `timeout` seconds (None:
    no limit). WireError when the server closed the socket, or sent what is not an answer."""
    deadline = None if timeout is None else time.monotonic() + timeout
    data = b""
    poller = select.poll()
    poller.register(sock, select.POLLIN)
    while len(data) < ANSWER.size:
        left = None if deadline is None else max(0.0, deadline - time.monotonic())
        if not poller.poll(None if left is None else left * 1000):
            if left is not None and left <= 0:
                return None
            continue
        try:
            more = sock.recv(ANSWER.size - len(data))
        except OSError as err:
            raise WireError(f"the fork server's socket failed: {err}") from None
        if not more:
            raise WireError("the fork server closed the socket")
        data += more
    letter, value = ANSWER.unpack(data)
    if letter not in (STARTED, EXITED):
        raise WireError(f"the fork server answered {letter!r}")
    return letter, value
