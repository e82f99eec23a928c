"""A function's output decoded while it arrives (orchestrator/run/streamed.py): the same items as
decoding it whole, in any chunking; anything else leaves the decode to the usual path."""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestrator import workers
from orchestrator.read.package import read_package
from orchestrator.run import resourcelist
from orchestrator.run.streamed import StreamedDecode
from testing.pipeline_helpers import deployment, write_package


def listing(tmp_path: Path, count: int = 40) -> str:
    write_package(tmp_path, {f"d{n}.yaml": f"# file {n}\n" + deployment(f"d{n}") for n in range(count)})
    items = read_package(tmp_path).resources
    config = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "fn"}, "data": {"a": "b"}}
    return resourcelist.encode(items, config) + "results:\n- message: done\n  severity: info\n"


def streamed_decode(data: bytes, size: int) -> resourcelist.Decoded | None:
    streamed = StreamedDecode("output of fn")
    for start in range(0, len(data), size):
        streamed.feed(data[start : start + size])
    return streamed.result()


def snapshot(decoded: resourcelist.Decoded) -> tuple:
    return [(r.data, r.text, r.body) for r in decoded.items], decoded.function_config, decoded.results


@pytest.mark.parametrize("size", [1, 7, 4096, 1 << 30])
def test_any_chunking_decodes_as_the_whole_does(size: int, tmp_path: Path) -> None:
    text = listing(tmp_path, 40 if size > 1 else 6)
    decoded = streamed_decode(text.encode(), size)
    assert decoded is not None and snapshot(decoded) == snapshot(resourcelist.decode(text, "output of fn"))


def test_output_arriving_faster_than_parsed_is_parsed_on_every_core_at_the_end(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(workers, "MIN_BYTES_TO_SHARE", 2000)
    text = listing(tmp_path, 60)
    data = text.encode()
    streamed = StreamedDecode("output of fn", workers=2)
    pieces = [data[start : start + 500] for start in range(0, len(data), 500)]
    for piece in pieces[:-1]:  # queued before the thread starts: far ahead of it
        streamed._chunks.put(piece)
        streamed._backlog += len(piece)
    streamed.feed(pieces[-1])
    decoded = streamed.result()
    assert decoded is not None and snapshot(decoded) == snapshot(resourcelist.decode(text, "output of fn"))


def test_a_huge_item_in_small_chunks_decodes(tmp_path: Path) -> None:
    """Fed in blocks at least as big as what the decoder holds: no copying per small chunk."""
    value = "x" * (3 << 20)
    text = f"apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: big\n  data:\n    v: {value}\n"
    decoded = streamed_decode(text.encode(), 32 << 10)
    assert decoded is not None and decoded.items[0].data["data"]["v"] == value


@pytest.mark.parametrize("output", [
    b"",  # nothing written
    b"apiVersion: v1\nkind: List\nitems: []\n",  # another layout: decoded whole, the usual way
    b"apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- apiVersion: v1\n  kind: [\n",  # bad YAML
    b"apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- apiVersion: v1\n  kind: \xff\n",  # bad UTF-8
    b"apiVersion: config.kubernetes.io/v1\r\nkind: ResourceList\r\nitems: []\r\n",  # CRLF
])
def test_what_the_fast_layout_does_not_cover_is_left_to_the_usual_decode(output: bytes) -> None:
    assert streamed_decode(output, 5) is None


def test_a_run_that_ends_another_way_stops_the_thread() -> None:
    streamed = StreamedDecode("output of fn")
    streamed.feed(b"apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- a")
    thread = streamed._thread
    streamed.close()
    assert thread is not None
    thread.join(10)
    assert not thread.is_alive()
