"""The `engine` marker, given and kept true.

A test needs the engine when it asks for a fixture that talks to it (ENGINE_FIXTURES, also through
another fixture), when its module imports the Docker SDK, testcontainers or a helper that starts
engines (ENGINE_IMPORTS), or when it is marked `engine` by hand (`pytestmark = pytest.mark.engine`:
a module that drives containers only through the fnrun it starts).

Every other test runs with DOCKER_HOST naming a socket of this module's, which answers each Docker
Engine API call with an error and remembers it: such a test that reaches for the engine fails
saying so, in the whole suite as in the fast subset `pytest -m "not engine"`, instead of passing
by luck or being skipped. It sees what goes through DOCKER_HOST: the SDK in the test process,
every fnrun and kpt the test starts, testcontainers. It cannot see a test that names the engine
itself (DOCKER_HOST="" in a child's environment) or a client an earlier test left cached."""

from __future__ import annotations

import ast
import functools
import json
import socket
import tempfile
import threading
from pathlib import Path

REFUSAL = "this test needs the engine: mark it `engine` (tests/testing/engine_guard.py says how)"
# Fixtures that build images, start containers or ask the engine.
ENGINE_FIXTURES = frozenset({"test_images", "catalog_images", "probe_image", "registry"})
# Modules whose import means the test module drives an engine of its own.
ENGINE_IMPORTS = ("docker", "testcontainers", "testing.engine_fixtures", "testing.registry", "testing.runtime_fixtures")


def needs_engine(path: Path, fixturenames: list[str]) -> bool:
    """Whether a test (in the file at path, asking for these fixtures) needs the engine."""
    return not ENGINE_FIXTURES.isdisjoint(fixturenames) or imports_engine(path)


@functools.cache
def imports_engine(path: Path) -> bool:
    """Whether the module imports any of ENGINE_IMPORTS (or a submodule), anywhere in it."""
    try:
        tree = ast.parse(path.read_bytes(), str(path))
    except (OSError, SyntaxError):
        return False
    for node in ast.walk(tree):
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""] if isinstance(node, ast.ImportFrom) and node.level == 0 else []
        if any(name == m or name.startswith(m + ".") for name in names for m in ENGINE_IMPORTS):
            return True
    return False


class EngineGuard:
    """A Unix socket that refuses the Docker Engine API and lists who asked."""

    def __init__(self) -> None:
        self._dir = Path(tempfile.mkdtemp(prefix="fnrun-guard-"))
        self.path = self._dir / "engine.sock"
        self.host = f"unix://{self.path}"
        self._calls: list[str] = []
        self._lock = threading.Lock()
        self._server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._server.bind(str(self.path))
        self._server.listen(64)
        threading.Thread(target=self._serve, name="engine-guard", daemon=True).start()

    def take(self) -> list[str]:
        """The calls made since the last take (request lines such as `GET /_ping`)."""
        with self._lock:
            calls, self._calls = self._calls, []
        return calls

    def close(self) -> None:
        self._server.close()
        self.path.unlink(missing_ok=True)
        self._dir.rmdir()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self._server.accept()
            except OSError:  # closed at the end of the session
                return
            threading.Thread(target=self._refuse, args=(conn,), daemon=True).start()

    def _refuse(self, conn: socket.socket) -> None:
        with conn:
            conn.settimeout(10)
            head = b""
            try:
                while b"\r\n\r\n" not in head and len(head) < 65536:
                    chunk = conn.recv(4096)
                    if not chunk:
                        break
                    head += chunk
            except OSError:
                pass
            line = head.split(b"\r\n", 1)[0].decode("latin-1")
            parts = line.split(" ")
            with self._lock:
                self._calls.append(" ".join(parts[:2]) if len(parts) >= 2 else "(a connection)")
            body = json.dumps({"message": REFUSAL}).encode()
            answer = (b"HTTP/1.1 500 Internal Server Error\r\nContent-Type: application/json\r\n"
                      b"Connection: close\r\nContent-Length: %d\r\n\r\n%s") % (len(body), body)
            try:
                conn.sendall(answer)
            except OSError:
                pass
