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
itself (DOCKER_HOST="" in a child's environment) or a client an earlier test left cached.

A run whose `-m` leaves out every test marked `engine` does not even import a module that says by
itself that all its tests need the engine (`module_needs_engine`): its tests would all be
deselected, and importing it costs time (and, for some, asks the engine while collecting)."""

from __future__ import annotations

import ast
import contextlib
import functools
import itertools
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

from .processes import alive

REFUSAL = "this test needs the engine: mark it `engine` (tests/testing/engine_guard.py says how)"
# Fixtures that build images, start containers or ask the engine.
ENGINE_FIXTURES = frozenset({"test_images", "catalog_images", "probe_image", "registry"})
# Modules whose import means the test module drives an engine of its own.
ENGINE_IMPORTS = ("docker", "testcontainers", "testing.engine_fixtures", "testing.registry", "testing.runtime_fixtures")


def needs_engine(path: Path, fixturenames: list[str]) -> bool:
    """Whether a test (in the file at path, asking for these fixtures) needs the engine."""
    return not ENGINE_FIXTURES.isdisjoint(fixturenames) or imports_engine(path)


@functools.cache
def _source(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None


@functools.cache
def _tree(path: Path) -> ast.Module | None:
    source = _source(path)
    try:
        return ast.parse(source, str(path)) if source is not None else None
    except SyntaxError:
        return None


@functools.cache
def imports_engine(path: Path) -> bool:
    """Whether the module imports any of ENGINE_IMPORTS (or a submodule), anywhere in it. A
    module whose text names none of them is not parsed (a third of the fast subset's collection)."""
    source = _source(path)
    if source is None or not any(name.encode() in source for name in ENGINE_IMPORTS):
        return False
    tree = _tree(path)
    if tree is None:
        return False
    for node in ast.walk(tree):
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""] if isinstance(node, ast.ImportFrom) and node.level == 0 else []
        if any(name == m or name.startswith(m + ".") for name in names for m in ENGINE_IMPORTS):
            return True
    return False

#: Where this module's top package is found (conftest imports it as `testing.engine_guard`, a test
#: as `tests.testing.engine_guard`): its server runs as that module, with its package's imports.
_IMPORT_ROOT = Path(__file__).resolve().parents[__spec__.name.count(".")]


@functools.cache
def module_needs_engine(path: Path) -> bool:
    """Whether every test of the module needs the engine, by what the module says itself: it
    imports a client of the engine, or its `pytestmark` gives the marker or an engine fixture
    (the tests' own fixtures are known only once it is imported)."""
    if imports_engine(path):
        return True
    source = _source(path)
    if source is None or b"pytestmark" not in source:
        return False
    tree = _tree(path)
    marks = [node.value for node in tree.body if isinstance(node, ast.Assign)
             and any(isinstance(t, ast.Name) and t.id == "pytestmark" for t in node.targets)] if tree else []
    return any(_marks_engine(node) for mark in marks for node in ast.walk(mark))


def _marks_engine(node: ast.AST) -> bool:
    """`pytest.mark.engine`, or `pytest.mark.usefixtures(...)` naming one of ENGINE_FIXTURES."""
    if isinstance(node, ast.Attribute):
        return node.attr == "engine" and isinstance(node.value, ast.Attribute) and node.value.attr == "mark"
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "usefixtures"
            and any(isinstance(arg, ast.Constant) and arg.value in ENGINE_FIXTURES for arg in node.args))


class _Unknown(Exception):
    """A mark expression that asks for a marker's arguments: whether it keeps `engine` is not known."""


def _matcher(marked: set[str]) -> Callable[..., bool]:
    """A test with exactly these markers, as `-m` sees it."""
    def matches(name: str, /, **kwargs: object) -> bool:
        if kwargs:
            raise _Unknown
        return name in marked
    return matches


def deselects_engine(markexpr: str) -> bool:
    """Whether `-m markexpr` deselects every test marked `engine`, whatever other markers it has
    (`not engine`, `not engine and not slow`; not `not engine or slow`)."""
    from _pytest.mark.expression import Expression  # pytest's own parser, so both read it alike

    try:
        expression = Expression.compile(markexpr)
    except SyntaxError:
        return False  # pytest says what is wrong with it
    others = sorted(expression.idents() - {"engine"})
    if "engine" not in expression.idents() or len(others) > 8:
        return False

    for chosen in itertools.product((False, True), repeat=len(others)):
        try:
            if expression.evaluate(_matcher({"engine", *(name for name, on in zip(others, chosen) if on)})):
                return False
        except _Unknown:
            return False
    return True


class EngineGuard:
    """A Unix socket that refuses the Docker Engine API and lists who asked.

    It is served by a process of its own: a thread in the test process would make it
    multi-threaded, and fnrun's host fork server (runtimes/host/forked.py) forks only a
    single-threaded process, so in-process tests would take its other path."""

    def __init__(self) -> None:
        self._dir = Path(tempfile.mkdtemp(prefix="fnrun-guard-"))
        self.path = self._dir / "engine.sock"
        self.host = f"unix://{self.path}"
        self._log = self._dir / "calls.log"
        self._log.touch()
        self._read = 0
        pid_file = self._dir / "guard.pid"
        # detached (the script forks and its first process exits): no child of the test process,
        # whose tests count their children; it ends by itself when this process is gone
        subprocess.run([sys.executable, "-m", __spec__.name, str(self.path), str(self._log), str(pid_file), str(os.getpid())],
                       stdin=subprocess.DEVNULL, check=True, timeout=30, cwd=_IMPORT_ROOT)
        deadline = time.monotonic() + 30
        while not (self.path.exists() and pid_file.exists() and pid_file.read_text().endswith("\n")):
            if time.monotonic() > deadline:
                raise RuntimeError(f"the engine guard did not start ({self._dir})")
            time.sleep(0.01)
        self._pid = int(pid_file.read_text())
        pid_file.unlink()

    def take(self) -> list[str]:
        """The calls made since the last take (request lines such as `GET /_ping`)."""
        with self._log.open("rb") as log:
            log.seek(self._read)
            new = log.read()
        complete = new[:new.rfind(b"\n") + 1]
        self._read += len(complete)
        return complete.decode("latin-1").splitlines()

    def close(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(self._pid, signal.SIGKILL)
        self.path.unlink(missing_ok=True)
        self._log.unlink(missing_ok=True)
        self._dir.rmdir()


def serve(path: str, log: str, pid_file: str, session: int) -> None:
    """Answer every connection on path with the refusal, after noting its request line in log
    (noted first: a test that got its answer finds its call there), while `session` lives."""
    if os.fork():
        os._exit(0)
    os.setsid()
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(64)
    server.settimeout(1)
    Path(pid_file).write_text(f"{os.getpid()}\n")
    lock = threading.Lock()
    with open(log, "ab", buffering=0) as out:
        while alive(session):
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            threading.Thread(target=_refuse, args=(conn, out, lock), daemon=True).start()


def _refuse(conn: socket.socket, out: BinaryIO, lock: threading.Lock) -> None:
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
        parts = head.split(b"\r\n", 1)[0].decode("latin-1").split(" ")
        with lock:
            out.write(((" ".join(parts[:2]) if len(parts) >= 2 else "(a connection)") + "\n").encode("latin-1"))
        body = json.dumps({"message": REFUSAL}).encode()
        answer = (b"HTTP/1.1 500 Internal Server Error\r\nContent-Type: application/json\r\n"
                  b"Connection: close\r\nContent-Length: %d\r\n\r\n%s") % (len(body), body)
        try:
            conn.sendall(answer)
        except OSError:
            pass


if __name__ == "__main__":
    serve(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]))
