"""fnrun's own framing (orchestrator.runtimes.remote.frames) beside the gRPC service, on `PATH.frames`
when the server listens on `unix:PATH`: the edit loop's client calls without grpcio.

Trust: the socket is this user's alone. It is made 0600 before it listens (bind, chmod, listen:
no moment where another user could connect), and a connection whose peer is another uid
(SO_PEERCRED) is closed unanswered. Whoever can connect can run any function the server may run,
as the gRPC socket lets them: the framing gives no one more than that. It is still bounded
against a broken or hostile peer: at most `connections` at once (more are refused RESOURCE_EXHAUSTED),
a request's lengths checked before anything is read (an image name at most 4 KiB, the ResourceList
at most `--max-request`), a deadline on reading the request and on writing the answer, and a peer
that closes mid-call cancels the call as a gRPC client's cancellation does."""

from __future__ import annotations

import os
import socket
import stat
import struct
import sys
import threading
import time
from collections.abc import Callable

from ..runtimes.remote import frames
from .calls import Calls

REQUEST_DEADLINE = 30.0  # seconds to send a whole request: local, so milliseconds when all is well
ANSWER_DEADLINE = 60.0  # seconds for the client to take the answer
DRAIN = 5.0  # seconds spent discarding a refused request's body, so the client reads the refusal
MAX_PATH = 107  # a unix socket's path, in bytes (sun_path less its NUL)


class FramedListener:
    """Accepts framed calls on `path` and answers each through the server's `Calls`."""

    def __init__(self, path: str, calls: Calls, max_request: int, connections: int) -> None:
        self.path = path
        self.calls = calls
        self.max_request = max_request
        self._slots = threading.BoundedSemaphore(connections)
        self._sock = _listen(path)
        self._busy = 0
        self._idle = threading.Condition()
        self._thread = threading.Thread(target=self._accept, name="fnrun-frames", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """No new connection from now on; the calls under way go on."""
        try:
            self._sock.shutdown(socket.SHUT_RDWR)  # wakes the accept
        except OSError:
            pass
        self._sock.close()
        self._thread.join(5)
        try:
            os.unlink(self.path)
        except OSError:
            pass

    def wait(self, seconds: float) -> None:
        """Until the calls under way are answered, or `seconds` passed (a request still arriving is
        no call yet: its connection ends with the process)."""
        end = time.monotonic() + seconds
        with self._idle:
            while self._busy and time.monotonic() < end:
                self._idle.wait(end - time.monotonic())

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return  # stopped
            if not _same_user(conn):
                conn.close()
                continue
            if not self._slots.acquire(blocking=False):
                _answer(conn, frames.Reply("RESOURCE_EXHAUSTED", "too many connections to the framed socket; try again later"))
                conn.close()
                continue
            threading.Thread(target=self._serve, args=(conn,), name="fnrun-frames-call", daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        try:
            reply = self._call(conn)
            if reply is not None:
                _answer(conn, reply)
        finally:
            conn.close()
            self._slots.release()

    def _call(self, conn: socket.socket) -> frames.Reply | None:
        """The request read within bounds, then answered as any call; None: nothing to answer."""
        started, deadline = time.monotonic(), time.monotonic() + REQUEST_DEADLINE
        try:
            image_size, body_size = frames.read_request_head(conn, deadline)
            image = frames.receive(conn, image_size, deadline).decode(errors="replace")
            if body_size > self.max_request:
                _refuse(conn, self.calls.refuse(image, started, body_size, "RESOURCE_EXHAUSTED",
                                                f"the request's {body_size} bytes are over the server's --max-request of {self.max_request}"),
                        body_size)
                return None
            body = frames.receive(conn, body_size, deadline)
        except frames.FrameError as err:
            print(f"fnrun serve: a framed request refused: {err}", file=sys.stderr, flush=True)
            _refuse(conn, frames.Reply("INVALID_ARGUMENT", f"a malformed request: {err}"), self.max_request)
            return None
        return self._evaluate(conn, image, body)

    def _evaluate(self, conn: socket.socket, image: str, body: bytes) -> frames.Reply:
        """The call, cancelled when the client closes its end before the answer."""
        with self._idle:
            self._busy += 1
        wake_read, wake_write = os.pipe()
        watcher: threading.Thread | None = None

        def watch_for(cancel: Callable[[], None]) -> None:
            nonlocal watcher
            watcher = threading.Thread(target=_watch, args=(conn, wake_read, cancel), name="fnrun-frames-watch", daemon=True)
            watcher.start()

        try:
            reply = self.calls.answer(body, image, watch_for)
        finally:
            os.write(wake_write, b"x")
            if watcher is not None:
                watcher.join()
            os.close(wake_read)
            os.close(wake_write)
            with self._idle:
                self._busy -= 1
                self._idle.notify_all()
        return reply


def _watch(conn: socket.socket, wake: int, cancel: Callable[[], None]) -> None:
    if frames.gone(conn, wake):
        cancel()


def _listen(path: str) -> socket.socket:
    """The socket, this user's only before anyone can connect; a stale socket file is replaced,
    anything else at the path is left alone (OSError)."""
    if len(os.fsencode(path)) > MAX_PATH:
        raise OSError(f"{path}: longer than a unix socket's {MAX_PATH} bytes")
    try:
        if stat.S_ISSOCK(os.lstat(path).st_mode):
            os.unlink(path)
    except FileNotFoundError:
        pass
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.bind(path)
        os.chmod(path, 0o600)
        sock.listen(64)
    except OSError:
        sock.close()
        raise
    return sock


def _same_user(conn: socket.socket) -> bool:
    """The peer runs as this user (Linux's SO_PEERCRED; elsewhere the socket's 0600 is the check)."""
    option = getattr(socket, "SO_PEERCRED", None)
    if option is None:
        return True
    _pid, uid, _gid = struct.unpack("3i", conn.getsockopt(socket.SOL_SOCKET, option, struct.calcsize("3i")))
    return uid == os.getuid()


def _answer(conn: socket.socket, reply: frames.Reply) -> None:
    try:
        frames.send(conn, frames.answer_frame(reply), time.monotonic() + ANSWER_DEADLINE)
    except frames.FrameError:
        pass  # the client went away: nobody to tell


def _refuse(conn: socket.socket, reply: frames.Reply, unread: int) -> None:
    """Answer a request refused before it was all read, then read and discard up to `unread` bytes
    for at most DRAIN seconds: a unix socket closed with unread input resets its peer, whose read
    of the refusal would then fail. Memory: one chunk."""
    _answer(conn, reply)
    end, size = time.monotonic() + DRAIN, unread
    try:
        conn.shutdown(socket.SHUT_WR)
        while size > 0 and time.monotonic() < end:
            conn.settimeout(max(0.001, end - time.monotonic()))
            chunk = conn.recv(min(size, frames.CHUNK))
            if not chunk:
                return
            size -= len(chunk)
    except OSError:
        pass
