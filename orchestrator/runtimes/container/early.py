"""A function container started by fnrun's launcher (orchestrator.launch) while the rest of fnrun
is still being imported, and its handover to the run (the launcher passes it down the CLI to the
run's registry, runtimes.Registry: no global holds it).

Creating and starting a container costs the engine ~0.2 s; importing fnrun (typer, ruamel, the
docker SDK) costs about as much. Done one after the other they add up; here the container is
created, attached to and started from a background thread over the engine's unix socket, with
plain HTTP and the standard library only (nothing is imported once the thread runs, so it never
contends with the main thread's imports). The run's pre-start pool (orchestrator.runtimes.container.prestart)
then asks `adopt` for a container with the create request it would send itself: only an equal
request adopts it, so the early container is exactly the one the run would have started. A
container nobody adopted is removed by `finish`, which the launcher reaches on every path, after
the run has ended and given it back.
"""

from __future__ import annotations

import json
import os
import secrets
import socket
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

_BEGUN = time.perf_counter()  # debug messages say when, from the launcher's start
TIMEOUT = 60.0  # a loaded engine can take seconds to start a container


class EngineError(Exception):
    """The engine refused or did not answer: the run then goes the ordinary way."""


@dataclass(frozen=True)
class Adopted:
    """The early container, now the run's: its id, its attach socket, and (a warm container) the
    staging directory bind-mounted at its /local (runtimes.container.warm.local)."""

    container_id: str
    socket: socket.socket
    staging: Path | None = None


class EarlyContainer:
    """One container created, attached and started in the background from `body`. The run adopts
    it by asking with `match` (by default `body`: a warm container is asked for by its plan's
    body, which leaves its staging mount out)."""

    def __init__(self, socket_path: str, body: dict[str, Any], match: dict[str, Any] | None = None,
                 staging: Path | None = None, debug: bool = False) -> None:
        self.socket_path = socket_path
        self.body = body
        self.match = body if match is None else match
        self.staging = staging
        self.debug = debug  # say on stderr what happens to it (the launcher's FNRUN_DEBUG_LAUNCH)
        self.name = f"fnrun-early-{os.getpid()}-{secrets.token_hex(4)}"  # removable even if create's answer is lost
        self.container_id: str | None = None
        self.unsure = False  # the create was sent and its answer never came: the container may exist
        self.attach_socket: socket.socket | None = None
        self.failure: str | None = None
        self._prefix = ""
        self._owner = "launcher"  # launcher | run | gone
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._start, name="fnrun-early", daemon=True)

    def begin(self) -> None:
        self._thread.start()

    def _start(self) -> None:
        try:
            status, headers, _ = self._call("GET", "/_ping", versioned=False)
            if status != 200 or not headers.get("server", "").startswith("Docker/") or "libpod-api-version" in headers:
                raise EngineError(f"not a Docker engine ({headers.get('server', 'no Server header')})")  # podman: ordinary path
            if headers.get("api-version"):
                self._prefix = f"/v{headers['api-version']}"
            self.unsure = True
            status, _, answer = self._call("POST", f"/containers/create?name={self.name}", self.body)
            if status != 201:
                self.unsure = False
                raise EngineError(f"create answered {status}: {answer[:200]!r}")
            self.container_id = json.loads(answer)["Id"]
            self.unsure = False
            self._debug(f"created container {self.container_id[:12]}")
            self.attach_socket = self._attach()
            status, _, answer = self._call("POST", f"/containers/{self.container_id}/start")
            if status not in (204, 304):
                raise EngineError(f"start answered {status}: {answer[:200]!r}")
            self._debug(f"started container {self.container_id[:12]} early")
        except Exception as err:  # noqa: BLE001 - whatever went wrong, the run goes the ordinary way
            self.failure = str(err) or type(err).__name__
            self._debug(f"no early container: {self.failure}")

    def adopt(self, body: dict[str, Any]) -> Adopted | None:
        """The started container when `body` is what it was made for; from then on the caller
        removes it (and its staging directory). None: the caller creates its own."""
        self._debug("the run asks for its container")
        self._thread.join()
        with self._lock:
            if self._owner != "launcher" or self.failure is not None or body != self.match:
                return None
            assert self.container_id is not None and self.attach_socket is not None
            self._owner = "run"
        self._debug(f"the run adopted container {self.container_id[:12]}")
        return Adopted(self.container_id, self.attach_socket, self.staging)

    def finish(self) -> None:
        """Remove the container unless the run adopted it (the run removes its own). A warning
        names only a container known to exist: one whose create may have reached the engine
        unanswered is removed by name if it can be, else left, with the rest of what a gone fnrun
        leaves, to the next fnrun's sweep (its labels name this process: container.orphans)."""
        if self._thread.ident is None:  # never begun: nothing was created
            return
        self._thread.join()
        self._debug("the command is done")
        with self._lock:
            mine = self._owner == "launcher"
            if mine:
                self._owner = "gone"
        if not mine:
            return
        if self.attach_socket is not None:
            self.attach_socket.close()
        if self.staging is not None:
            from orchestrator.runtimes.container.warm.local import remove

            remove(self.staging)
        if self.container_id is None and not self.unsure:
            return  # never created: the engine was not there, or refused the create
        try:
            status, _, answer = self._call("DELETE", f"/containers/{self.container_id or self.name}?force=1&v=1")
        except OSError as err:
            self._could_not_remove(str(err))
            return
        if status in (204, 404):
            if status == 204:
                self._debug(f"removed unused container {self.name}")
            return
        self._could_not_remove(repr(answer[:200]))

    def _could_not_remove(self, why: str) -> None:
        if self.container_id is None:
            self._debug(f"could not remove {self.name}, which may not exist: {why}")
            return
        print(f"fnrun: warning: could not remove early container {self.name} ({self.container_id[:12]}): {why}; "
              "the next fnrun on this engine removes it", file=sys.stderr)

    def _connect(self) -> socket.socket:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(TIMEOUT)
        try:
            sock.connect(self.socket_path)
        except BaseException:
            sock.close()
            raise
        return sock

    def _call(self, method: str, path: str, body: dict[str, Any] | None = None, versioned: bool = True) -> tuple[int, dict[str, str], bytes]:
        """One request on a connection of its own (closed by the engine after its answer)."""
        sock = self._connect()
        try:
            payload = json.dumps(body).encode() if body is not None else b""
            head = f"{method} {self._prefix if versioned else ''}{quote(path, safe='/?=&:')} HTTP/1.1\r\nHost: docker\r\nConnection: close\r\n"
            if body is not None:
                head += "Content-Type: application/json\r\n"
            sock.sendall(f"{head}Content-Length: {len(payload)}\r\n\r\n".encode() + payload)
            status, headers, rest = _read_head(sock)
            chunks = [rest]
            while chunk := sock.recv(65536):
                chunks.append(chunk)
            data = b"".join(chunks)
            return status, headers, _dechunk(data) if headers.get("transfer-encoding") == "chunked" else data
        finally:
            sock.close()

    def _attach(self) -> socket.socket:
        """The hijacked attach stream, opened before start so no output is missed. Nothing follows
        the answer's head until the container runs, so the socket holds nothing read ahead."""
        sock = self._connect()
        try:
            sock.sendall(
                f"POST {self._prefix}/containers/{self.container_id}/attach?stdin=1&stdout=1&stderr=1&stream=1 HTTP/1.1\r\n"
                "Host: docker\r\nConnection: Upgrade\r\nUpgrade: tcp\r\nContent-Length: 0\r\n\r\n".encode()
            )
            status, _, rest = _read_head(sock)
            if status not in (101, 200) or rest:
                raise EngineError(f"attach answered {status}")
            sock.settimeout(None)
            return sock
        except BaseException:
            sock.close()
            raise

    def _debug(self, message: str) -> None:
        if self.debug:
            # one write per line: two threads' print() calls interleave their text and newline
            sys.stderr.write(f"fnrun launcher: {message} (+{time.perf_counter() - _BEGUN:.3f}s)\n")
            sys.stderr.flush()


def _read_head(sock: socket.socket) -> tuple[int, dict[str, str], bytes]:
    """The status and headers of an answer, and whatever of its body came with them."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(4096)
        if not chunk:
            raise EngineError("the engine closed the connection")
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {}
    for line in lines[1:]:
        key, _, value = line.partition(":")
        headers[key.strip().lower()] = value.strip()
    return status, headers, rest


def _dechunk(data: bytes) -> bytes:
    out = bytearray()
    while data:
        size_line, _, data = data.partition(b"\r\n")
        size = int(size_line.split(b";")[0], 16)
        if size == 0:
            break
        out += data[:size]
        data = data[size + 2:]
    return bytes(out)

