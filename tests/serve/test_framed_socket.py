"""fnrun's framed socket beside `fnrun serve`'s gRPC one: what a broken or hostile peer can do to
either side (bounded, never a hang), who may connect, and a client that imports no grpcio.
The behaviours both transports share are tests over PROTOCOLS in test_serve.py, test_client.py
and test_serve_faults.py."""

from __future__ import annotations

import os
import socket
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from orchestrator.runtimes.remote import frames
from testing.pipeline_helpers import REPO, deployment, snapshot, test_images, write_package  # noqa: F401 - fixture
from testing.serving import Server, resource_list

LABEL = "fnrun-test/label:v1"
NO_ENGINE = {"DOCKER_HOST": "unix:///nonexistent/docker.sock"}


@pytest.fixture(scope="module")
def server(test_images: None) -> Iterator[Server]:  # noqa: F811 - the fixture
    running = Server("--no-cache", "--max-request", "64k")
    try:
        yield running
    finally:
        code, stderr = running.stop()
        assert code == 0 and "Traceback" not in stderr, stderr


def raw(server: Server, data: bytes, close_write: bool = True) -> bytes:
    """Send `data` on a raw connection to the framed socket; all the server answers until it closes."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(120)
        sock.connect(server.framed)
        sock.sendall(data)
        if close_write:
            sock.shutdown(socket.SHUT_WR)
        parts = []
        while chunk := sock.recv(65536):
            parts.append(chunk)
        return b"".join(parts)


def answer_of(data: bytes) -> frames.Reply:
    """The Reply the server framed in `data`."""
    left, right = socket.socketpair()
    with left, right:
        left.sendall(data)
        left.shutdown(socket.SHUT_WR)
        return frames.read_answer(right, 1 << 30, time.monotonic() + 10)


def assert_serves(server: Server) -> None:
    answer = server.ask(resource_list("web", config={"a": "b"}), LABEL, "frames")
    assert answer.status == "OK" and b"a: b" in answer.resource_list, answer


@pytest.mark.parametrize("data, status", [
    (b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", "INVALID_ARGUMENT"),  # not a frame
    (frames.REQUEST.pack(b"FNRF", 9, 4, 4) + b"imagbody", "INVALID_ARGUMENT"),  # another version
    (frames.REQUEST.pack(frames.MAGIC, frames.VERSION, 1 << 30, 0), "INVALID_ARGUMENT"),  # a 1 GiB image name
    (frames.REQUEST.pack(frames.MAGIC, frames.VERSION, 5, 0xFFFFFFFF) + LABEL[:5].encode(), "RESOURCE_EXHAUSTED"),  # 4 GiB declared
    (frames.REQUEST.pack(frames.MAGIC, frames.VERSION, len(LABEL), 1000) + LABEL.encode() + b"short", "INVALID_ARGUMENT"),  # cut short
    (b"FN", "INVALID_ARGUMENT"),  # half a header
])
def test_a_malformed_or_oversized_frame_is_refused_and_the_server_serves_on(server: Server, data: bytes, status: str) -> None:
    answered = raw(server, data)
    assert answer_of(answered).status == status
    assert_serves(server)


def test_a_peer_that_connects_and_says_nothing_holds_no_one_up(server: Server) -> None:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as idle:
        idle.connect(server.framed)
        idle.sendall(frames.REQUEST.pack(frames.MAGIC, frames.VERSION, len(LABEL), 100))  # and then nothing
        assert_serves(server)


def test_the_framed_socket_is_this_user_s_only(server: Server) -> None:
    mode = os.stat(server.framed).st_mode & 0o777
    assert mode == 0o600, oct(mode)
    if os.getuid() != 0:
        return
    os.chmod(server.dir, 0o711)  # the directory lets anyone through: the socket's own mode must refuse
    child = os.fork()
    if child == 0:  # another user, trying to connect
        code = 1
        try:
            os.setuid(65534)
            socket.socket(socket.AF_UNIX).connect(server.framed)
            code = 0
        except PermissionError:
            code = 7
        finally:
            os._exit(code)
    _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 7, "another user connected"


def test_the_client_imports_no_grpc(server: Server, tmp_path: Path) -> None:
    """`fnrun run --server unix:...` in a child process: the call answered, and no grpc, protobuf or
    docker SDK module was ever imported (checked at its exit, which fnrun takes by os._exit)."""
    root = write_package(tmp_path / "pkg", {"app.yaml": deployment("web")})
    probe = (
        "import os, sys\nreal = os._exit\n"
        "def leave(code):\n"
        "    loaded = sorted(m for m, v in sys.modules.items() if v is not None and m.split('.')[0] in ('grpc', 'grpc_tools', 'google', 'docker'))\n"
        "    os.write(2, ('LOADED %r\\n' % loaded).encode()); real(code)\n"
        "os._exit = leave\nsys.argv = ['fnrun', *sys.argv[1:]]\nfrom orchestrator.__main__ import main\nmain()\n"
    )
    done = subprocess.run([sys.executable, "-c", probe, "run", str(root), "--image", LABEL, "--server", server.address, "--", "tier=web"],
                          cwd=REPO, env={**os.environ, **NO_ENGINE}, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "tier: web" in (root / "app.yaml").read_text()
    assert "LOADED []" in done.stderr, done.stderr


# ------------------------------------------------------------------ the framing itself, no server

REPLIES = st.builds(frames.Reply, st.sampled_from(sorted(frames.CODE)), st.text(max_size=200), st.binary(max_size=2000),
                    st.binary(max_size=500), st.integers(-(2**31), 2**31 - 1))


@given(REPLIES)
def test_an_answer_reads_back_as_it_was_framed(reply: frames.Reply) -> None:
    assert answer_of(frames.answer_frame(reply)) == reply


@settings(max_examples=300)
@given(st.binary(max_size=200), st.integers(0, 4))
def test_any_bytes_from_a_server_are_an_answer_or_one_frame_error(data: bytes, cut: int) -> None:
    """Whatever a broken server sends (a valid head with lies in it, then EOF): a Reply or a
    FrameError, never another exception, never a read beyond what was sent, never a hang."""
    head = frames.ANSWER.pack(frames.MAGIC, frames.VERSION, 0, 0, *struct.unpack(">III", (data + bytes(12))[:12]))
    for candidate in (data, head[: len(head) - cut] + data[12:]):
        try:
            reply = answer_of(candidate)
        except frames.FrameError:
            continue
        assert len(reply.resource_list) + len(reply.log) <= len(candidate)


def test_a_client_gets_no_further_than_its_deadline() -> None:
    """A server that accepts and never answers: the client's call ends at its deadline."""
    left, right = socket.socketpair()
    with left, right, pytest.raises(frames.FrameError, match="deadline"):
        frames.call(right, LABEL, b"x", 1024, timeout=0.5)


def test_a_server_killed_mid_answer_is_a_frame_error() -> None:
    left, right = socket.socketpair()
    whole = frames.answer_frame(frames.Reply("OK", "", b"x" * 5000))

    def half_then_die() -> None:
        left.recv(65536)
        left.sendall(whole[:100])
        left.close()

    threading.Thread(target=half_then_die).start()
    with right, pytest.raises(frames.FrameError, match="closed mid-frame"):
        frames.call(right, LABEL, b"body", 1 << 20, timeout=60)
