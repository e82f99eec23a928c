"""Feeding stdin and draining stdout/stderr of one function, shared by the container and exec runtimes.

One thread, one selector: writing a 5 MB ResourceList while the function is already answering can
never deadlock, the timeout is a plain deadline, and Ctrl-C interrupts the select like any other
blocking call. stderr reaches the caller line by line as it arrives.
"""

from __future__ import annotations

import os
import selectors
import struct
import time
from collections.abc import Callable

from orchestrator.errors import FunctionError
from orchestrator.sizes import human_size

CHUNK = 1 << 18
_HEADER = struct.Struct(">BxxxL")  # docker attach framing: stream id, 3 pad bytes, big-endian length

Writer = Callable[[memoryview], int]


#: What fnrun keeps of a function's stderr for its messages: the tail, where the error usually is.
STDERR_TAIL = 64 * 1024
#: A line of stderr longer than this reaches the display in pieces.
MAX_LINE = 16 * 1024


class OutputTooLarge(Exception):
    """A function wrote more on stdout than the cap allows; the runtime kills it and says so."""

    def __init__(self, limit: int) -> None:
        super().__init__(limit)
        self.limit = limit


def too_large(name: str, limit: int) -> FunctionError:
    return FunctionError(
        f"function {name} wrote more than {human_size(limit)} on stdout and was killed "
        f"(a runaway function? raise the cap with --max-output)"
    )


class BoundedOutput:
    """Collects stdout up to `limit` bytes; one byte more raises OutputTooLarge, which ends the
    pump at once (the function is still running: the runtime kills it)."""

    def __init__(self, limit: int | None) -> None:
        self._limit = limit
        self._size = 0
        self._chunks: list[bytes] = []

    def feed(self, data: bytes) -> None:
        self._size += len(data)
        if self._limit is not None and self._size > self._limit:
            self._chunks.clear()
            raise OutputTooLarge(self._limit)
        self._chunks.append(data)

    def value(self) -> bytes:
        return b"".join(self._chunks)

    def tee(self, also: Callable[[bytes], None]) -> Callable[[bytes], None]:
        """`feed` that also hands each piece kept to `also`."""

        def feed(data: bytes) -> None:
            self.feed(data)
            also(data)

        return feed


class LineSplitter:
    """Hands each complete line of a byte stream (decoded, newline stripped) to `sink`, and keeps
    only the last STDERR_TAIL bytes: a function that floods stderr costs fnrun no memory."""

    def __init__(self, sink: Callable[[str], None] | None) -> None:
        self._sink = sink
        self._tail = bytearray()
        self._dropped = False
        self._partial = b""

    def feed(self, data: bytes) -> None:
        self._tail += data
        if len(self._tail) > 2 * STDERR_TAIL:
            del self._tail[: len(self._tail) - STDERR_TAIL]
            self._dropped = True
        if self._sink is None:
            return
        *lines, partial = (self._partial + data).split(b"\n")
        for line in lines:
            self._sink(_decode(line))
        while len(partial) > MAX_LINE:
            self._sink(_decode(partial[:MAX_LINE]))
            partial = partial[MAX_LINE:]
        self._partial = partial

    def close(self) -> str:
        """Flush an unterminated last line; return what was kept (the tail, marked when cut)."""
        if self._sink is not None and self._partial:
            self._sink(_decode(self._partial))
        self._partial = b""
        tail = bytes(self._tail[-STDERR_TAIL:] if self._dropped else self._tail)
        if self._dropped:
            tail = b"[... earlier stderr dropped ...]\n" + tail.split(b"\n", 1)[-1]
        return _decode(tail)


def _decode(data: bytes) -> str:
    return data.decode("utf-8", errors="replace").rstrip("\r")


class FrameSplitter:
    """Cuts a byte stream of length-prefixed frames (`header`: a key, then the payload's length)
    into whole frames, each handed to `handlers[key]` (a key without a handler, or an empty
    payload, is dropped). `handlers` is read at each frame: its owner may change it between them."""

    def __init__(self, header: struct.Struct, handlers: dict[object, Callable[[bytes], None]]) -> None:
        self._header = header
        self._handlers = handlers
        self._buf = bytearray()

    def feed(self, data: bytes) -> None:
        buf, header = self._buf, self._header
        buf += data
        pos = 0
        while len(buf) - pos >= header.size:
            key, size = header.unpack_from(buf, pos)
            end = pos + header.size + size
            if end > len(buf):
                break
            handler = self._handlers.get(key)
            if handler is not None and size:
                handler(bytes(buf[pos + header.size : end]))
            pos = end
        del buf[:pos]


class FrameDemux(FrameSplitter):
    """Splits docker's multiplexed attach stream (8-byte header per frame) into stdout and stderr."""

    def __init__(self, on_stdout: Callable[[bytes], None], on_stderr: Callable[[bytes], None]) -> None:
        super().__init__(_HEADER, {1: on_stdout, 2: on_stderr})


def pump(
    write_fd: int | None,
    data: bytes,
    write: Writer,
    close_write: Callable[[], None],
    readers: dict[int, Callable[[bytes], None]],
    deadline: float | None,
    recv: dict[int, Callable[[int], bytes]] | None = None,
    until: Callable[[], bool] | None = None,
) -> bool:
    """Write `data` to `write_fd` (then `close_write`) while reading every fd in `readers` to EOF,
    or (`until`) until all is written and `until()` says the exchange is over (a stream that
    serves more than one exchange never ends between them).

    `write_fd` may also be a reader (a socket). An fd in `recv` is read through its function (a
    TLS socket: BlockingIOError when no whole record is there), any other with os.read. Returns
    False when `deadline` (time.monotonic) passes first. A peer that stops reading early (exited)
    just ends the writing.
    """
    recv = recv or {}
    view = memoryview(data)
    offset = 0
    writing = write_fd is not None
    if writing and not data:
        _safe(close_write)
        writing = False
    open_readers = dict(readers)
    for fd in {*open_readers, *([write_fd] if writing and write_fd is not None else [])}:
        os.set_blocking(fd, False)

    with selectors.DefaultSelector() as selector:

        def register() -> None:
            for fd in {*open_readers, *([write_fd] if writing and write_fd is not None else [])}:
                mask = (selectors.EVENT_READ if fd in open_readers else 0) | (
                    selectors.EVENT_WRITE if writing and fd == write_fd else 0
                )
                try:
                    selector.modify(fd, mask)
                except KeyError:
                    selector.register(fd, mask)

        def unregister(fd: int) -> None:
            if fd not in open_readers and not (writing and fd == write_fd):
                selector.unregister(fd)
            else:
                register()

        register()
        while open_readers:
            if until is not None and not writing and until():
                break
            timeout = None if deadline is None else deadline - time.monotonic()
            if timeout is not None and timeout <= 0:
                return False
            for key, events in selector.select(timeout):
                fd = key.fd
                if events & selectors.EVENT_WRITE and writing:
                    try:
                        offset += write(view[offset : offset + CHUNK])
                        done = offset >= len(view)
                    except BlockingIOError:
                        done = False
                    except OSError:  # the function exited or closed stdin without reading it all
                        done = True
                    if done:
                        _safe(close_write)
                        writing = False
                        unregister(fd)
                if events & selectors.EVENT_READ and fd in open_readers:
                    try:
                        chunk = recv[fd](CHUNK) if fd in recv else os.read(fd, CHUNK)
                    except BlockingIOError:
                        continue
                    except OSError:
                        chunk = b""
                    if chunk:
                        open_readers[fd](chunk)
                    else:
                        del open_readers[fd]
                        unregister(fd)
    return True


def _safe(action: Callable[[], None]) -> None:
    try:
        action()
    except OSError:
        pass
