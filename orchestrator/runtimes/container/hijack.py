"""A container's attach stream as file descriptors streams.pump can drive, over every transport.

The function protocol needs EOF on the function's stdin once the ResourceList is written while its
stdout is still being read: a half-close. What that takes differs by transport:

- unix socket and plain tcp: `shutdown(SHUT_WR)`;
- TLS: Python's `SSLSocket.shutdown` drops the TLS state, so the TCP half-close is made on the
  socket underneath and the TLS session keeps reading. The engine's TLS reads a clean EOF at a
  record boundary (Go's crypto/tls) and closes the container's stdin, as for plain tcp;
- ssh (the SDK's shell-out to the system `ssh`, which runs `docker system dial-stdio` there):
  two pipes; closing ssh's stdin is the EOF that dial-stdio passes on as a half-close.

Reads and writes never block, so the deadline in pump still ends a function that hangs. The fds
are read directly, past the HTTP response's buffered reader: nothing is buffered there beyond the
headers, because fnrun attaches before it starts the container.
"""

from __future__ import annotations

import os
import socket
import ssl
import subprocess
from collections.abc import Callable
from dataclasses import dataclass

from orchestrator.errors import FnrunError


@dataclass(frozen=True)
class Duplex:
    fd: int  # read from (the function's stdout and stderr, framed)
    write_fd: int  # the function's stdin
    recv: Callable[[int], bytes] | None  # None: os.read(fd); raises BlockingIOError when nothing is ready
    send: Callable[[memoryview], int]
    close_write: Callable[[], None]
    close: Callable[[], None]


def duplex(stream: object) -> Duplex:
    """The Duplex for what `APIClient._get_raw_response_socket` returned for an attach."""
    if isinstance(stream, ssl.SSLSocket):
        return _tls(stream)
    proc = getattr(stream, "proc", None)
    if isinstance(proc, subprocess.Popen):
        return _ssh(proc)
    raw = getattr(stream, "_sock", stream)
    if isinstance(raw, socket.socket):
        return _plain(raw)
    raise FnrunError(f"fnrun cannot stream a function's stdin over this engine connection ({type(stream).__name__})")


def _plain(sock: socket.socket) -> Duplex:
    return Duplex(
        fd=sock.fileno(),
        write_fd=sock.fileno(),
        recv=None,
        send=lambda chunk: sock.send(chunk, socket.MSG_NOSIGNAL),
        close_write=lambda: sock.shutdown(socket.SHUT_WR),
        close=lambda: _close_socket(sock),
    )


def _tls(sock: ssl.SSLSocket) -> Duplex:
    sock.setblocking(False)  # a partial record raises SSLWantReadError instead of waiting for the rest

    def recv(size: int) -> bytes:
        try:
            data = sock.recv(size)
            while data and sock.pending():  # decrypted bytes the fd's readiness cannot show
                data += sock.recv(sock.pending())
            return data
        except (ssl.SSLWantReadError, ssl.SSLWantWriteError):
            raise BlockingIOError from None

    def send(chunk: memoryview) -> int:
        try:
            return sock.send(chunk)
        except (ssl.SSLWantReadError, ssl.SSLWantWriteError):
            raise BlockingIOError from None

    return Duplex(
        fd=sock.fileno(),
        write_fd=sock.fileno(),
        recv=recv,
        send=send,
        close_write=lambda: socket.socket.shutdown(sock, socket.SHUT_WR),  # the TCP half, TLS state kept
        close=lambda: _close_socket(sock),
    )


def _ssh(proc: subprocess.Popen) -> Duplex:
    assert proc.stdin is not None and proc.stdout is not None
    stdin, stdout = proc.stdin, proc.stdout
    write_fd = stdin.fileno()

    def close() -> None:  # stdout is the HTTP response's: closing that closes it
        try:
            stdin.close()
        except OSError:
            pass
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()

    return Duplex(
        fd=stdout.fileno(),
        write_fd=write_fd,
        recv=None,
        send=lambda chunk: os.write(write_fd, chunk),
        close_write=stdin.close,
        close=close,
    )


def _close_socket(sock: socket.socket) -> None:
    try:
        socket.socket.shutdown(sock, socket.SHUT_RDWR)
    except OSError:
        pass
    sock.close()
