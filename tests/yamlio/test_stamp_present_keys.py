"""A file that already carries fnrun's bookkeeping annotations (as `kpt fn source` output written to
files does): the reader's stamping replaces them where they stand, never adds a second copy (which
ruamel-based write-back then refused with a DuplicateKeyError traceback)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st
from ruamel.yaml import YAML

from orchestrator import annotations as ann
from orchestrator.read.package import read_file
from orchestrator.yamlio import fast
from testing.pipeline_helpers import fnrun, write_package

OURS = (ann.PATH, ann.INDEX, ann.INTERNAL_PATH, ann.INTERNAL_INDEX)
THEIRS = ("keep", "example.com/note")


def _quoted(word: str, style: str) -> str:
    return {"plain": word, "single": f"'{word}'", "double": f'"{word}"'}[style]


_style = st.sampled_from(("plain", "single", "double"))
_value = st.sampled_from(("0", "7", "x.yaml", "sub/other.yaml", "cm.yaml"))
_entry = st.tuples(st.sampled_from(OURS + THEIRS), _style, _value, _style, st.booleans(), st.booleans())


def _document(entries: list[tuple[str, str, str, str, bool, bool]]) -> str:
    lines = ["apiVersion: v1\n", "kind: ConfigMap\n", "metadata:\n", "  name: cm\n", "  annotations:\n"]
    for key, key_style, value, value_style, comment_after, comment_above in entries:
        if comment_above:
            lines.append("    # above\n")
        lines.append(f"    {_quoted(key, key_style)}: {_quoted(value, value_style)}{' # after' if comment_after else ''}\n")
    return "".join(lines) + "data:\n  a: b\n"


@settings(max_examples=300, deadline=None)
@given(st.lists(_entry, min_size=1, max_size=6, unique_by=lambda entry: entry[0]), st.sampled_from(("cm.yaml", "sub/cm.yaml")))
def test_stamping_replaces_the_keys_a_file_holds(entries, rel):
    doc = _document(entries)
    _, [resource] = read_file(rel, doc.encode())
    YAML().load(io.StringIO(resource.text))  # ruamel refuses duplicate keys
    annotations = fast.load(resource.text, "stamped")["metadata"]["annotations"]
    assert annotations == resource.data["metadata"]["annotations"]
    for key in (ann.PATH, ann.INTERNAL_PATH):
        assert annotations[key] == rel
    for key in (ann.INDEX, ann.INTERNAL_INDEX):
        assert annotations[key] == "0"
    written = fast.load(doc, "written")["metadata"]["annotations"]
    for key in THEIRS:
        assert annotations.get(key) == written.get(key)
    body = resource.text.splitlines()
    assert len(body) == len(doc.splitlines()) + len(OURS) - sum(key in OURS for key, *_ in entries), "a line gained or lost"


ROOT_KPTFILE = "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: root\n"
SUB_KPTFILE = """apiVersion: kpt.dev/v1
kind: Kptfile
metadata:
  name: sub
pipeline:
  mutators:
  - image: fnrun/set-labels:v1
    configMap:
      app: demo
"""


@pytest.mark.engine  # render asks the engine about the image, though the builtin runs in-process
def test_render_of_a_file_with_a_stamped_index(tmp_path: Path) -> None:
    """As `kpt fn render` does with the same package (checked with kpt 1.0.0-beta.56): the file's own
    bookkeeping keys go, the user's stay, and annotations left empty go with them."""
    root = write_package(
        tmp_path / "pkg",
        {
            "Kptfile": ROOT_KPTFILE,
            "sub/Kptfile": SUB_KPTFILE,
            "sub/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n  annotations:\n"
            "    config.kubernetes.io/index: '0'\ndata:\n  a: b\n",
            "sub/cm2.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm2\n  annotations:\n"
            '    internal.config.kubernetes.io/path: "x.yaml" # c\n    keep: me\n    config.kubernetes.io/path: other.yaml\n'
            "data:\n  a: b\n",
        },
    )
    result = fnrun("render", str(root), env={"FNRUN_BUILTIN_CATALOG": "1"})
    assert result.code == 0, result.stderr
    assert "Traceback" not in result.stderr
    assert (root / "sub/cm.yaml").read_text() == "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n  labels:\n    app: demo\ndata:\n  a: b\n"
    assert (root / "sub/cm2.yaml").read_text() == (
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm2\n  annotations:\n    keep: me\n  labels:\n    app: demo\ndata:\n  a: b\n"
    )
    assert sorted(p.name for p in (root / "sub").iterdir()) == ["Kptfile", "cm.yaml", "cm2.yaml"]
