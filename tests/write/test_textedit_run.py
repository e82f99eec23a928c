"""Write-back by text edits through the real CLI and a real function image: the label function
over files laid out unevenly keeps every original line."""

from __future__ import annotations

from pathlib import Path

import pytest

from testing.pipeline_helpers import fnrun, snapshot

pytestmark = pytest.mark.usefixtures("test_images")

FILES = {
    # labels' children at five spaces in a two-space file, trailing spaces after values
    "uneven.yaml": b"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web   \n  labels:\n       app: web  # five\nspec:\n  replicas: 1\n",
    # a document at one space with four-space nested maps
    "one-space.yaml": b" apiVersion: v1\n kind: ConfigMap\n metadata:\n     name: one\n data:\n     k: v\n",
    # CRLF and LF mixed: each line keeps its own end
    "mixed.yaml": b"apiVersion: v1\r\nkind: ConfigMap\nmetadata:\r\n  name: mixed\n  labels:\r\n    app: a\r\ndata:\n  k: v\r\n",
}


def _kept_in_order(original: bytes, written: bytes) -> bool:
    rest = iter(written.splitlines(keepends=True))
    return all(any(line == other for other in rest) for line in original.splitlines(keepends=True))


def test_label_function_keeps_every_line_of_uneven_files(tmp_path: Path) -> None:
    for name, content in FILES.items():
        (tmp_path / name).write_bytes(content)
    result = fnrun("run", str(tmp_path), "--image", "fnrun-test/label:v1", "--", "team=platform")
    assert result.code == 0, result.stderr
    written = {name: (tmp_path / name).read_bytes() for name in FILES}
    for name, content in FILES.items():
        assert _kept_in_order(content, written[name]), written[name]
    assert b"       app: web  # five\n       team: platform\n" in written["uneven.yaml"]
    assert b" metadata:\n     name: one\n     labels:\n         team: platform\n" in written["one-space.yaml"]
    assert b"    app: a\r\n    team: platform\r\n" in written["mixed.yaml"]
    before = snapshot(tmp_path)
    again = fnrun("run", str(tmp_path), "--image", "fnrun-test/label:v1", "--", "team=platform")
    assert again.code == 0, again.stderr
    assert snapshot(tmp_path) == before  # the second run writes nothing
