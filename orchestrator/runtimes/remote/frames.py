"""fnrun's own framing of one EvaluateFunction call, for a `fnrun serve` on a unix socket of this
machine: the same request and answer as the gRPC contract, carried over the standard library's
`socket`, so an edit loop's client imports neither grpcio nor protobuf (their import and the
.proto's code cost more than the call itself).

Where: a server listening on `unix:PATH` (gRPC, for Porch and every gRPC client, unchanged) also
listens on `PATH.frames` with this framing; a client given `unix:PATH` and no TLS speaks it when
that socket is there, gRPC otherwise. The address the user gives is the same either way.

One request, one answer, one connection. Every frame has a fixed header with each length in it;
each length is checked against a bound before anything is read or allocated, and every read and
write has a deadline, so a broken or hostile peer costs at most a bounded buffer and a bounded wait.
A status is gRPC's code (same number, same name), so both transports map to the same errors."""

from __future__ import annotations

import select
import socket
import struct
import time
from dataclasses import dataclass

MAGIC = b"FNRF"
VERSION = 1
SUFFIX = ".frames"  # the framed socket: beside the gRPC one
REQUEST = struct.Struct(">4sBxxxII")  # magic, version, image length, ResourceList length
ANSWER = struct.Struct(">4sBBxxiIII")  # magic, version, status, exit code, ResourceList, log, message lengths
MAX_IMAGE = 4096  # an image reference is far shorter; a longer one is not a request
MAX_LOG = 64 * 1024 * 1024  # a function's stderr as the server kept it
MAX_MESSAGE = 64 * 1024
CHUNK = 1 << 20

#: gRPC's status codes this contract uses, by number (the numbers are gRPC's).
STATUS = {0: "OK", 1: "CANCELLED", 3: "INVALID_ARGUMENT", 4: "DEADLINE_EXCEEDED", 5: "NOT_FOUND",
          8: "RESOURCE_EXHAUSTED", 13: "INTERNAL", 14: "UNAVAILABLE"}
CODE = {name: number for number, name in STATUS.items()}


class FrameError(Exception):
    """The peer broke the framing, went away, or outlasted the deadline; the text says which."""


class TooLarge(FrameError):
    """A length over its bound: refused before a byte of it is read."""


@dataclass(frozen=True)
class Reply:
    """The answer to one call: a status name, its message, and the function's output (on OK, and on
    INTERNAL for a function that failed: its ResourceList with results, its stderr, its exit code)."""

    status: str
    message: str = ""
    resource_list: bytes = b""
    log: bytes = b""
    exit_code: int = 0


def socket_path(address: str) -> str | None:
    """The file of a `unix:PATH` (or `unix:///PATH`) address; None for HOST:PORT."""
    if not address.startswith("unix:"):
        return None
    path = address[len("unix:"):]
    return path[2:] if path.startswith("///") else path


def framed_path(address: str) -> str | None:
    """Where a server on `address` speaks this framing: None unless a unix socket."""
    path = socket_path(address)
    return path + SUFFIX if path else None


def receive(sock: socket.socket, size: int, deadline: float) -> bytes:
    """Exactly `size` bytes (already checked against a bound), or FrameError at EOF or the deadline."""
    parts: list[bytes] = []
    left = size
    while left:
        sock.settimeout(max(0.001, deadline - time.monotonic()))
        try:
            part = sock.recv(min(left, CHUNK))
        except TimeoutError:
            raise FrameError("no answer within the deadline") from None
        except OSError as err:
            raise FrameError(f"the connection broke: {err.strerror or err}") from None
        if not part:
            raise FrameError("the connection closed mid-frame" if parts or left < size else "the connection closed")
        parts.append(part)
        left -= len(part)
    return b"".join(parts)


def send(sock: socket.socket, data: bytes, deadline: float) -> None:
    sock.settimeout(max(0.001, deadline - time.monotonic()))
    try:
        sock.sendall(data)
    except TimeoutError:
        raise FrameError("the peer did not read within the deadline") from None
    except OSError as err:
        raise FrameError(f"the connection broke: {err.strerror or err}") from None


def request_frame(image: str, resource_list: bytes) -> bytes:
    name = image.encode()
    return REQUEST.pack(MAGIC, VERSION, len(name), len(resource_list)) + name + resource_list


def read_request_head(sock: socket.socket, deadline: float) -> tuple[int, int]:
    """(image length, ResourceList length) of a request, the image's bound checked."""
    magic, version, image_size, body_size = REQUEST.unpack(receive(sock, REQUEST.size, deadline))
    if magic != MAGIC or version != VERSION:
        raise FrameError("not a fnrun frame (or another version of it)")
    if image_size > MAX_IMAGE:
        raise TooLarge(f"an image name of {image_size} bytes (at most {MAX_IMAGE})")
    return image_size, body_size


def answer_frame(reply: Reply) -> bytes:
    message = reply.message.encode(errors="replace")[:MAX_MESSAGE]
    head = ANSWER.pack(MAGIC, VERSION, CODE[reply.status], reply.exit_code, len(reply.resource_list), len(reply.log), len(message))
    return b"".join((head, reply.resource_list, reply.log, message))


def read_answer(sock: socket.socket, max_resource_list: int, deadline: float) -> Reply:
    """The server's answer, every length checked against its bound before it is read."""
    magic, version, status, exit_code, body_size, log_size, message_size = ANSWER.unpack(receive(sock, ANSWER.size, deadline))
    if magic != MAGIC or version != VERSION or status not in STATUS:
        raise FrameError("the answer is not a fnrun frame (or another version of it)")
    for size, bound, what in ((body_size, max_resource_list, "ResourceList"), (log_size, MAX_LOG, "log"), (message_size, MAX_MESSAGE, "message")):
        if size > bound:
            raise TooLarge(f"an answer's {what} of {size} bytes (at most {bound})")
    body = receive(sock, body_size, deadline)
    log = receive(sock, log_size, deadline)
    message = receive(sock, message_size, deadline).decode(errors="replace")
    return Reply(STATUS[status], message, body, log, exit_code)


def connect(path: str) -> socket.socket | None:
    """A connection to the server framing at `path`; None when nothing listens there (no socket,
    a stale one, another user's): the caller then speaks gRPC to the address as given."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(10.0)
    try:
        sock.connect(path)
    except OSError:
        sock.close()
        return None
    return sock


def call(sock: socket.socket, image: str, resource_list: bytes, max_resource_list: int, timeout: float) -> Reply:
    """One call on a connection from `connect`, which it closes; FrameError when it fails."""
    deadline = time.monotonic() + timeout
    try:
        try:
            send(sock, request_frame(image, resource_list), deadline)
        except FrameError:  # a server refusing the request closes early: its answer may be there still
            pass
        return read_answer(sock, max_resource_list, deadline)
    finally:
        sock.close()


def gone(sock: socket.socket, wake: int) -> bool:
    """Block until the peer closes (or sends more, which this contract never does) or `wake`
    becomes readable: True for the first, how a server learns that a client went away mid-call."""
    poller = select.poll()
    poller.register(sock.fileno(), select.POLLIN | select.POLLPRI | getattr(select, "POLLRDHUP", 0))
    poller.register(wake, select.POLLIN)
    return all(fd != wake for fd, _ in poller.poll())
