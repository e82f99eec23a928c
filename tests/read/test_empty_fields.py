"""Empty and null fields (`{}`, `[]`, `~`, a key with no value) survive: byte for byte in
resources that did not change, and in changed resources wherever the function kept them. fnrun
fills an empty or null `annotations` with its path/index annotations on the way to a function;
stripping them must give the map back as it was, not drop it."""

from __future__ import annotations

from pathlib import Path

import pytest

from testing.io_helpers import fnrun, pipe, snapshot, write_files

FILES = {
    "flow-empty.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  annotations: {}\ndata: {}\n",
    "null.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n  annotations:\n  labels: ~\ndata:\n",
    "first-key.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  annotations: {}\n  name: c\nbinaryData: {}\n",
    "tilde.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: d\n  annotations: ~\nimmutable: null\n",
    "lists.yaml": "apiVersion: v1\nkind: Pod\nmetadata:\n  name: e\n  annotations: {}\nspec:\n  containers: []\n  volumes:\n",
    "meta-empty.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {}\n",
    "meta-null.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n",
    "two.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: f\n  annotations: {}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: g\n  annotations:\n",
}


def test_source_sink_keeps_empty_and_null_fields(tmp_path: Path) -> None:
    root = write_files(tmp_path / "pkg", FILES)
    result = pipe(root, tmp_path / "out")
    assert result.returncode == 0, result.stderr
    for name, content in FILES.items():
        assert (tmp_path / "out" / name).read_text() == content, name


def test_source_sink_in_place_touches_nothing(tmp_path: Path) -> None:
    root = write_files(tmp_path / "pkg", FILES)
    before = snapshot(root)
    result = pipe(root, root)
    assert result.returncode == 0, result.stderr
    assert snapshot(root) == before


@pytest.mark.engine
@pytest.mark.parametrize("image", ["fnrun/set-labels:v1", "fnrun-test/label:v1"])
def test_a_changed_resource_keeps_its_empty_fields(tmp_path: Path, image: str) -> None:
    """fnrun's set-labels (builtin) and a ruamel round-tripping container function label every
    resource; every other line stays, `annotations: {}` and `annotations:` included."""
    root = write_files(tmp_path / "pkg", FILES)
    result = fnrun("run", str(root), "--image", image, "--", "color=red")
    assert result.returncode == 0, result.stderr
    for name, content in FILES.items():
        written = (root / name).read_text()
        assert "color: red" in written, (name, written)
        kept = [line for line in content.splitlines() if not line.startswith(("metadata:", "  labels:"))]
        assert all(line in written.splitlines() for line in kept), (name, written)
    assert "  annotations: {}\n" in (root / "flow-empty.yaml").read_text()
    assert "  annotations:\n" in (root / "null.yaml").read_text()
    assert "  annotations: ~\n" in (root / "tilde.yaml").read_text()
    assert "  containers: []\n  volumes:\n" in (root / "lists.yaml").read_text()
    before = snapshot(root)
    again = fnrun("run", str(root), "--image", image, "--", "color=red")
    assert again.returncode == 0, again.stderr
    assert snapshot(root) == before  # a second run changes nothing


@pytest.mark.engine
def test_an_unchanged_resource_keeps_its_bytes_through_a_function(tmp_path: Path) -> None:
    """A function that changes nothing (identity, a ruamel round trip) leaves every file alone."""
    root = write_files(tmp_path / "pkg", FILES)
    before = snapshot(root)
    result = fnrun("run", str(root), "--image", "fnrun-test/identity:v1")
    assert result.returncode == 0, result.stderr
    assert snapshot(root) == before
