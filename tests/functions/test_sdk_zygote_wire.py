"""The image's fork server (functions/sdk/zygote.py) from this tree, asked the way the warm helper
(orchestrator/runtimes/container/warm/fnrun-warm.c `zygote_call`) asks it: over a stream socket
at its fd 3, a 4-byte big-endian length sent with the call's three streams, the body as bytes
written out here (not by functions/forkwire.py, so the helper's view is pinned), and 5-byte answers
read back. No image or engine: the server runs on this machine, as the image's would."""

from __future__ import annotations

import os
import select
import signal
import socket
import struct
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

PROBE = """\
import os, signal, sys
sys.stdout.write(repr([sys.argv[1:], os.environ.get("CALL_VALUE"), sys.stdin.read()]))
sys.stdout.flush()
if "die" in sys.argv:
    os.kill(os.getpid(), signal.SIGTERM)
sys.exit(int(sys.argv[-1]) if sys.argv[-1].isdigit() else 0)
"""

# Started the way the helper starts it: its socket as fd 3, nothing else open but the streams.
START = "import os, sys, runpy; os.dup2(int(sys.argv[1]), 3); os.close(int(sys.argv[1])); " \
        "sys.argv[1:] = ['wireprobe']; runpy.run_module('functions.sdk.zygote', run_name='__main__')"


class Server:
    def __init__(self, process: subprocess.Popen[bytes], sock: socket.socket) -> None:
        self.process, self.sock = process, sock

    def call(self, argv: list[str], env: dict[str, str], stdin: bytes = b"") -> tuple[int, bytes, int]:
        """(the child's pid, its stdout, its exit code), as the helper learns them."""
        strings = [*argv, *(f"{k}={v}" for k, v in env.items())]
        body = struct.pack(">LLL", len(argv), len(env), 0) + b"".join(s.encode() + b"\0" for s in strings)
        ins, outs, errs = os.pipe(), os.pipe(), os.pipe()
        socket.send_fds(self.sock, [struct.pack(">L", len(body))], [ins[0], outs[1], errs[1]])
        self.sock.sendall(body)
        for fd in (ins[0], outs[1], errs[1]):
            os.close(fd)
        started = self.answer()
        os.write(ins[1], stdin)
        os.close(ins[1])
        with os.fdopen(outs[0], "rb") as out, os.fdopen(errs[0], "rb") as err:
            output, _ = out.read(), err.read()
        ended = self.answer()
        assert started[0] == b"P" and ended[0] == b"X", (started, ended)
        return started[1], output, ended[1]

    def answer(self) -> tuple[bytes, int]:
        data = b""
        while len(data) < 5:
            assert select.select([self.sock], [], [], 30)[0], "no answer from the fork server"
            more = self.sock.recv(5 - len(data))
            assert more, f"the fork server went: {self.stop()!r}"
            data += more
        return data[:1], struct.unpack(">L", data[1:])[0]

    def stop(self) -> bytes:
        self.sock.close()
        try:
            _, err = self.process.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            _, err = self.process.communicate()
        return err


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    (tmp_path / "wireprobe.py").write_text(textwrap.dedent(PROBE))
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    # LC_ALL=C: no locale's gconv cache mapped shared, which the server refuses to hand down when
    # its user may write the file (as root may here; the images run it as nobody)
    env = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": f"{REPO}{os.pathsep}{tmp_path}", "LC_ALL": "C"}
    process = subprocess.Popen([sys.executable, "-c", START, str(theirs.fileno())], pass_fds=(theirs.fileno(),),
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    theirs.close()
    ours.settimeout(30)
    served = Server(process, ours)
    yield served
    served.stop()


def test_calls_run_as_python_m_would_and_answer_pid_and_exit(server: Server) -> None:
    pid, output, code = server.call(["python3", "-m", "wireprobe", "a b", "3"], {"CALL_VALUE": "x=y"}, b"in")
    assert output == repr([["a b", "3"], "x=y", "in"]).encode()
    assert code == 3 and pid not in (0, server.process.pid)
    pid2, output, code = server.call(["python3", "-m", "wireprobe"], {}, b"")
    assert output == repr([[], None, ""]).encode() and code == 0 and pid2 != pid  # nothing of the call before


def test_a_signal_is_128_and_the_signal(server: Server) -> None:
    _, _, code = server.call(["python3", "-m", "wireprobe", "die"], {})
    assert code == 128 + signal.SIGTERM


def test_options_are_refused_in_the_child(server: Server) -> None:
    """The image's server honours none of the host's options: the call fails, the server serves on."""
    body = struct.pack(">LLL", 3, 0, 1) + b"python3\0-m\0wireprobe\0cwd=/\0"
    ins, outs, errs = os.pipe(), os.pipe(), os.pipe()
    socket.send_fds(server.sock, [struct.pack(">L", len(body))], [ins[0], outs[1], errs[1]])
    server.sock.sendall(body)
    for fd in (ins[0], outs[1], errs[1], ins[1]):
        os.close(fd)
    assert server.answer()[0] == b"P"
    with os.fdopen(outs[0], "rb") as out, os.fdopen(errs[0], "rb") as err:
        assert out.read() == b"" and b"options are the host's" in err.read()
    assert server.answer() == (b"X", 70)
    assert server.call(["python3", "-m", "wireprobe", "5"], {})[2] == 5


def test_an_oversized_call_ends_the_server_unread(server: Server) -> None:
    """Nothing follows the length: a server that tried to read what it claims would hang here."""
    fd = os.open(os.devnull, os.O_RDONLY)
    socket.send_fds(server.sock, [struct.pack(">L", 0xFFFFFFFF)], [fd, fd, fd])
    os.close(fd)
    assert server.process.wait(timeout=30) == 1
    assert b"not serving" in server.process.stderr.read()  # type: ignore[union-attr]
