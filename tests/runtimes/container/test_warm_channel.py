"""fnrun's end of the warm helper's protocol, against a helper that says what no real call can make
it say: something the call started survives SIGKILL (a process of another user, stuck in the
kernel). The call ran: its output and exit code are its result, the container is unfit ('U'), and
nothing takes it for a call that never started (which would run it again elsewhere)."""

from __future__ import annotations

import socket
import struct
import threading

import pytest

from orchestrator.runtimes.container.runtime import Attached
from orchestrator.runtimes.container.warm.channel import Channel, NotClean
from orchestrator.runtimes.protocol import Invocation, Sandbox

DOCKER = struct.Struct(">BxxxL")  # the engine's attach frames: stream 1 stdout, 2 stderr
HELPER = struct.Struct(">cL")
CALL = Invocation(name="fn", image="fn", sandbox=Sandbox(timeout=30))


def helper_says(*frames: tuple[bytes, bytes]) -> Channel:
    """A channel whose peer reads the call ('S', stdin) and answers `frames` on the helper's stdout."""
    ours, theirs = socket.socketpair()

    def peer() -> None:
        with theirs:
            got = b""
            while not got.endswith(HELPER.pack(b"C", 0)):
                got += theirs.recv(65536)
            answer = b"".join(HELPER.pack(kind, len(body)) + body for kind, body in frames)
            theirs.sendall(DOCKER.pack(1, len(answer)) + answer)
            theirs.recv(1)  # until fnrun closes

    threading.Thread(target=peer, daemon=True).start()
    return Channel(Attached.over(ours))


def test_a_call_that_ran_but_left_a_survivor_keeps_its_result_and_marks_the_container_unfit() -> None:
    channel = helper_says((b"O", b"out"), (b"U", b"a process of the call survives"), (b"X", struct.pack(">L", 3)))
    try:
        channel.start(("fn",), {})
        assert channel.converse(CALL, b"in", None, None) == (b"out", "", 3)
        assert channel.unfit == "a process of the call survives"
    finally:
        channel.close()


def test_a_refusal_before_the_function_ran_is_not_clean() -> None:
    channel = helper_says((b"N", b"a process of an earlier call survives"))
    try:
        channel.start(("fn",), {})
        with pytest.raises(NotClean, match="earlier call survives"):
            channel.converse(CALL, b"in", None, None)
        assert channel.unfit is None
    finally:
        channel.close()
