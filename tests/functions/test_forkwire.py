"""The fork servers' one protocol (functions/forkwire.py): what is encoded decodes to the same call,
a frame crosses a socket with its descriptors, and a malformed or oversized frame is refused
without reading or allocating what it claims, and without waiting for bytes that never come.
No engine needed."""

from __future__ import annotations

import ast
import os
import socket
import struct
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from functions import forkwire

REPO = Path(__file__).resolve().parents[2]

text = st.text(st.characters(blacklist_characters="\0", blacklist_categories=("Cs",)), max_size=40)
names = st.text(st.characters(blacklist_characters="\0=", blacklist_categories=("Cs",)), min_size=1, max_size=20)
calls = st.builds(
    forkwire.Call,
    module=names,
    args=st.lists(text, max_size=5).map(tuple),
    env=st.dictionaries(names, text, max_size=5),
    cwd=st.none() | text,
    memory=st.integers(0, 1 << 62),
    handover=st.booleans(),
    path=st.lists(text, max_size=4).map(tuple),
)


@pytest.fixture
def pair() -> Iterator[tuple[socket.socket, socket.socket]]:
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    theirs.settimeout(10)  # a receiver that waited for bytes never sent fails here instead of hanging
    ours.settimeout(10)
    yield ours, theirs
    ours.close()
    theirs.close()


def open_fds() -> set[int]:
    return {int(name) for name in os.listdir("/proc/self/fd")}


@given(calls)
def test_a_call_decodes_to_itself(call: forkwire.Call) -> None:
    assert forkwire.decode(forkwire.encode(call)) == call


@given(st.binary(max_size=200))
@settings(max_examples=300)
def test_any_body_decodes_or_is_refused(body: bytes) -> None:
    try:
        forkwire.decode(body)
    except forkwire.WireError:
        pass


@given(calls, st.integers(0, 11))
def test_a_body_cut_or_grown_is_refused(call: forkwire.Call, cut: int) -> None:
    body = forkwire.encode(call)
    with pytest.raises(forkwire.WireError):
        forkwire.decode(body[:len(body) - 1 - cut % len(body)])
    with pytest.raises(forkwire.WireError):
        forkwire.decode(body + b"x\0")


def test_the_warm_helpers_body_is_a_call_without_options() -> None:
    """The bytes fnrun-warm.c sends the image's fork server: u32 argc, u32 envc, u32 0, strings."""
    body = struct.pack(">LLL", 4, 1, 0) + b"python3\0-m\0functions.x\0--flag\0A=b=c\0"
    assert forkwire.decode(body) == forkwire.Call("functions.x", ("--flag",), {"A": "b=c"})


@pytest.mark.parametrize("body, says", [
    (struct.pack(">LLL", 0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF), "cannot hold"),
    (struct.pack(">LLL", 2, 0, 0) + b"python3\0-m\0", "not `python3 -m MODULE"),
    (struct.pack(">LLL", 3, 0, 0) + b"python3\0-m\0x", "no NUL"),
    (struct.pack(">LLL", 3, 1, 0) + b"python3\0-m\0x\0NOEQUALS\0", "not NAME=VALUE"),
    (struct.pack(">LLL", 3, 0, 1) + b"python3\0-m\0x\0memory=-1\0", "not a number"),
    (struct.pack(">LLL", 3, 0, 1) + b"python3\0-m\0x\0handover=yes\0", "not 0 or 1"),
    (struct.pack(">LLL", 3, 0, 1) + b"python3\0-m\0x\0shell=1\0", "unknown option"),
    (struct.pack(">LLL", 3, 0, 2) + b"python3\0-m\0x\0cwd=/a\0cwd=/b\0", "twice"),
    (b"\0\0\0", "no counts"),
])
def test_malformed_bodies_are_refused(body: bytes, says: str) -> None:
    with pytest.raises(forkwire.WireError, match=says):
        forkwire.decode(body)


def test_a_string_with_a_nul_is_not_encoded() -> None:
    with pytest.raises(forkwire.WireError, match="NUL"):
        forkwire.encode(forkwire.Call("m", env={"A": "x\0y"}))


@given(calls)
@settings(max_examples=30, deadline=None)
def test_a_frame_crosses_with_its_descriptors(call: forkwire.Call) -> None:
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    read_end, write_end = os.pipe()
    try:
        theirs.settimeout(10)
        forkwire.send(ours, forkwire.encode(call), [write_end, write_end, read_end])
        got = forkwire.receive(theirs, 3)
        assert got is not None
        fds, body = got
        assert len(fds) == 3 and forkwire.decode(body) == call
        os.write(fds[0], b"through")
        assert os.read(read_end, 16) == b"through"
        for fd in fds:
            os.close(fd)
        ours.close()
        assert forkwire.receive(theirs, 3) is None  # closed between frames: the end, no error
    finally:
        for end in (ours, theirs):
            end.close()
        os.close(read_end)
        os.close(write_end)


def test_an_oversized_length_is_refused_unread(pair: tuple[socket.socket, socket.socket]) -> None:
    """Nothing follows the length: reading the body it claims would wait (here, time out)."""
    ours, theirs = pair
    before = open_fds()
    read_end, write_end = os.pipe()
    socket.send_fds(ours, [struct.pack(">L", 0xFFFFFFFF)], [read_end, write_end, read_end])
    with pytest.raises(forkwire.WireError, match="over the"):
        forkwire.receive(theirs, 3)
    os.close(read_end)
    os.close(write_end)
    assert open_fds() == before  # the descriptors that came with it are closed


def test_the_largest_body_is_read_and_one_more_byte_refused(pair: tuple[socket.socket, socket.socket]) -> None:
    ours, theirs = pair
    with pytest.raises(forkwire.WireError):
        forkwire.send(ours, bytes(forkwire.MAX_BODY + 1), [])
    fd = os.open(os.devnull, os.O_RDONLY)
    sender = threading.Thread(target=forkwire.send, args=(ours, bytes(forkwire.MAX_BODY), [fd]))
    sender.start()
    try:
        got = forkwire.receive(theirs, 1)
        assert got is not None and len(got[1]) == forkwire.MAX_BODY
        os.close(got[0][0])
    finally:
        sender.join()
        os.close(fd)


@pytest.mark.parametrize("sent", [b"\0\0", b"\0\0\0\x10", b"\0\0\0\x10partial"], ids=["in the length", "no body", "half a body"])
def test_a_frame_cut_by_the_peer_going_is_refused(sent: bytes, pair: tuple[socket.socket, socket.socket]) -> None:
    ours, theirs = pair
    before = open_fds()
    fd = os.open(os.devnull, os.O_RDONLY)
    socket.send_fds(ours, [sent], [fd, fd, fd])
    os.close(fd)
    ours.close()
    with pytest.raises(forkwire.WireError, match="ended"):
        forkwire.receive(theirs, 3)
    assert open_fds() <= before


@pytest.mark.parametrize("count", [0, 2, 4])
def test_a_frame_with_other_descriptors_is_refused(count: int, pair: tuple[socket.socket, socket.socket]) -> None:
    ours, theirs = pair
    before = open_fds()
    fds = [os.open(os.devnull, os.O_RDONLY) for _ in range(count)]
    if fds:
        forkwire.send(ours, forkwire.encode(forkwire.Call("m")), fds)
    else:
        ours.sendall(struct.pack(">L", 0))
    for fd in fds:
        os.close(fd)
    with pytest.raises(forkwire.WireError, match="descriptors"):
        forkwire.receive(theirs, 3)
    assert open_fds() == before


def test_answers(pair: tuple[socket.socket, socket.socket]) -> None:
    ours, theirs = pair
    ours.sendall(forkwire.answer(forkwire.STARTED, 4242) + forkwire.answer(forkwire.EXITED, 137)[:2])
    assert forkwire.read_answer(theirs, 5) == (forkwire.STARTED, 4242)
    assert forkwire.read_answer(theirs, 0.05) is None  # half an answer: none yet
    ours.sendall(b"S\0\0\0\0")
    with pytest.raises(forkwire.WireError, match="answered"):
        forkwire.read_answer(theirs, 5)
    ours.close()
    with pytest.raises(forkwire.WireError, match="closed"):
        forkwire.read_answer(theirs, 5)


@pytest.mark.parametrize("status, code", [(0, 0), (3 << 8, 3), (255 << 8, 255), (9, 137), (15, 143)])
def test_exit_codes_are_the_status_or_128_and_the_signal(status: int, code: int) -> None:
    assert forkwire.exit_code(status) == code


# The modules that speak the protocol, and must take every part of it from functions/forkwire.py.
SPEAKERS = ["functions/sdk/zygote.py", "orchestrator/runtimes/host/zygote.py", "orchestrator/runtimes/host/forked.py"]


@pytest.mark.parametrize("path", SPEAKERS)
def test_only_forkwire_defines_the_wire_format(path: str) -> None:
    """No struct format, packed integer, answer letter or pickle of its own: a second definition
    of the format is how the two servers came to speak two protocols."""
    tree = ast.parse((REPO / path).read_text())
    imported = {alias.name for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom))
                for alias in node.names} | {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module}
    assert not imported & {"struct", "pickle", "marshal"}, path
    assert "forkwire" in imported, path
    letters = [node.value for node in ast.walk(tree)
               if isinstance(node, ast.Constant) and isinstance(node.value, bytes) and node.value[:1].isalpha() and len(node.value) <= 5]
    assert letters == [], (path, letters)
    formats = [node.value for node in ast.walk(tree) if isinstance(node, ast.Constant) and isinstance(node.value, str)
               and node.value[:1] in "!<>=@" and len(node.value) > 1 and node.value[1:].isalpha() and node.value[1:].isupper()]
    assert formats == [], (path, formats)
    sockets = [ast.unparse(node) for node in ast.walk(tree)
               if isinstance(node, ast.Attribute) and node.attr in ("SOCK_SEQPACKET", "SOCK_DGRAM", "recv_fds", "send_fds")]
    assert sockets == [], (path, sockets)
