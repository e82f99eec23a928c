"""The one frame splitter behind docker's attach stream and the warm helper's channel: however the
bytes are cut by the socket, every frame comes out whole, once, in order, to its key's handler."""

from __future__ import annotations

import struct

from hypothesis import given, strategies as st

from orchestrator.runtimes.supervise.streams import FrameDemux, FrameSplitter

DOCKER = struct.Struct(">BxxxL")  # docker's header: stream, three pad bytes, big-endian length
HELPER = struct.Struct(">cL")  # the warm helper's: a letter, then the length

frames = st.lists(st.tuples(st.sampled_from([b"O", b"E", b"X", b"Q"]), st.binary(max_size=300)), max_size=30)


def cut(data: bytes, points: list[int]) -> list[bytes]:
    """`data` split at `points` (positions taken modulo its length), as recv() might hand it over."""
    edges = sorted({p % (len(data) + 1) for p in points} | {0, len(data)})
    return [data[a:b] for a, b in zip(edges, edges[1:])]


@given(frames, st.lists(st.integers(min_value=0), max_size=40))
def test_every_frame_comes_out_whole_however_the_stream_is_cut(sent: list[tuple[bytes, bytes]], points: list[int]) -> None:
    got: list[tuple[bytes, bytes]] = []
    handlers = {key: (lambda payload, key=key: got.append((key, payload))) for key in (b"O", b"E", b"X")}  # no handler for Q
    splitter = FrameSplitter(HELPER, handlers)
    stream = b"".join(HELPER.pack(key, len(payload)) + payload for key, payload in sent)
    for piece in cut(stream, points):
        splitter.feed(piece)
    assert got == [(key, payload) for key, payload in sent if key != b"Q" and payload]


@given(st.lists(st.tuples(st.sampled_from([1, 2]), st.binary(min_size=1, max_size=200)), max_size=20), st.lists(st.integers(min_value=0), max_size=20))
def test_docker_stdout_and_stderr_frames_are_told_apart(sent: list[tuple[int, bytes]], points: list[int]) -> None:
    out, err = bytearray(), bytearray()
    demux = FrameDemux(out.extend, err.extend)
    stream = b"".join(DOCKER.pack(kind, len(payload)) + payload for kind, payload in sent)
    for piece in cut(stream, points):
        demux.feed(piece)
    assert bytes(out) == b"".join(p for k, p in sent if k == 1) and bytes(err) == b"".join(p for k, p in sent if k == 2)


def test_a_frame_cut_short_waits_for_the_rest() -> None:
    got: list[bytes] = []
    splitter = FrameSplitter(HELPER, {b"O": got.append})
    frame = HELPER.pack(b"O", 5) + b"hello"
    splitter.feed(frame[:7])
    assert got == []
    splitter.feed(frame[7:])
    assert got == [b"hello"]
