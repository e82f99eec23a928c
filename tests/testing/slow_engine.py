"""A unix socket in front of the container engine that passes every byte through, except that it
holds back the engine's answer to one chosen create request: the container then exists in the
engine while fnrun still waits to learn its id. That is the moment a stop must not lose a
container (tests/cli/test_sigterm_in_create.py), and one no timing can hit on purpose.

Requests are read as HTTP/1.1 (a head, then Content-Length bytes of body) up to a request that
upgrades the connection (attach, exec start): from there on the connection is a raw stream.
"""

from __future__ import annotations

import os
import socket
import threading
from pathlib import Path

UPSTREAM = "/var/run/docker.sock"
_CHUNK = 65536


def upstream_socket() -> str:
    host = os.environ.get("DOCKER_HOST", "")
    return host.removeprefix("unix://") if host.startswith("unix://") else UPSTREAM


class SlowEngine:
    """Serves at `path`; the answer to create request number `hold` (from 1, counted over all
    connections; None: none held) waits until `release()`. `answered` is set once the engine has
    answered that create, i.e. the container exists."""

    def __init__(self, path: Path, hold: int | None = None, upstream: str | None = None) -> None:
        self.path = path
        self.hold = hold
        self.upstream = upstream or upstream_socket()
        self.creates = 0
        self.answered = threading.Event()
        self._released = threading.Event()
        self._lock = threading.Lock()
        self._server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._server.bind(str(path))
        self._server.listen(64)
        self._closed = False
        self._connections: list[socket.socket] = []
        self._threads = [threading.Thread(target=self._accept, name="slow-engine", daemon=True)]
        self._threads[0].start()

    def release(self) -> None:
        self._released.set()

    def close(self) -> None:
        """Stop serving and end every thread of it: a thread left running in the test process
        would change what fnrun's library does there (it forks helpers only while single-threaded)."""
        self._closed = True
        self._released.set()
        with self._lock:
            sockets = [self._server, *self._connections]
        for sock in sockets:
            try:
                sock.shutdown(socket.SHUT_RDWR)  # wakes a thread blocked in accept or recv: close alone does not
            except OSError:
                pass
        for thread in self._threads:
            thread.join(10)
        for sock in sockets:
            sock.close()
        self.path.unlink(missing_ok=True)
        assert not [thread for thread in self._threads if thread.is_alive()], "a slow-engine thread did not end"

    def __enter__(self) -> SlowEngine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._server.accept()
            except OSError:
                return
            engine = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                engine.connect(self.upstream)
            except OSError:
                client.close()
                engine.close()
                continue
            held = threading.Event()  # this connection's next answer is the held create's
            pair = [threading.Thread(target=self._requests, args=(client, engine, held), daemon=True),
                    threading.Thread(target=self._answers, args=(engine, client, held), daemon=True)]
            with self._lock:
                self._connections += [client, engine]
                self._threads += pair
            for thread in pair:
                thread.start()

    def _requests(self, client: socket.socket, engine: socket.socket, held: threading.Event) -> None:
        reader = _RequestReader()
        try:
            while data := client.recv(_CHUNK):
                for method, target in reader.feed(data):
                    if method == "POST" and target.split("?")[0].endswith("/containers/create"):
                        with self._lock:
                            self.creates += 1
                            if self.creates == self.hold:
                                held.set()  # before the request leaves: its answer cannot overtake
                engine.sendall(data)
        except OSError:
            pass
        finally:
            _half_close(engine)

    def _answers(self, engine: socket.socket, client: socket.socket, held: threading.Event) -> None:
        try:
            while data := engine.recv(_CHUNK):
                if held.is_set():
                    held.clear()
                    self.answered.set()
                    self._released.wait()
                client.sendall(data)
        except OSError:
            pass
        finally:
            _half_close(client)


def _half_close(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_WR)
    except OSError:
        pass


class _RequestReader:
    """The heads of the requests in a client's byte stream, as they complete."""

    def __init__(self) -> None:
        self._buffer = b""
        self._body = 0  # body bytes still to skip
        self._raw = False

    def feed(self, data: bytes) -> list[tuple[str, str]]:
        if self._raw:
            return []
        self._buffer += data
        found = []
        while True:
            if self._body:
                skipped = min(self._body, len(self._buffer))
                self._buffer, self._body = self._buffer[skipped:], self._body - skipped
                if self._body:
                    return found
            end = self._buffer.find(b"\r\n\r\n")
            if end < 0:
                return found
            head, self._buffer = self._buffer[:end].decode("latin-1"), self._buffer[end + 4:]
            lines = head.split("\r\n")
            method, target = lines[0].split(" ")[:2]
            found.append((method, target))
            headers = {key.strip().lower(): value.strip() for key, _, value in (line.partition(":") for line in lines[1:])}
            if "upgrade" in headers or headers.get("transfer-encoding", "").lower() == "chunked":
                self._raw = True  # a raw stream from here on (or a body this reader does not follow)
                return found
            self._body = int(headers.get("content-length", "0") or 0)
