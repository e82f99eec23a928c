"""Text outside a resource belongs to its file: whatever a function does with the items (re-serialize
them with ruamel.yaml, reverse them, drop every comment with PyYAML), no line moves to another
file or another resource, and a file whose resources did not change keeps every byte.

Random packages carry what real repositories do: file header comments, `---` lines with comments,
comments between documents, trailing comments, empty maps, anchors and aliases, lines ending in a
tab (outside and inside block scalars); the functions are real container images
(tests/images/label, reorder, dropcomments)."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from testing.pipeline_helpers import fnrun, write_package
from testing.runtime_fixtures import project_image

LABEL = "owner=team"
SLOW = settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def _document(draw: st.DrawFn, name: str, index: int) -> str:
    stem = name.removesuffix(".yaml")
    lines = [f"# head of {stem} document {index}\n"] if draw(st.booleans()) else []
    lines += ["apiVersion: v1\n", "kind: ConfigMap\n", "metadata:\n"]
    lines.append(f"  name: {stem}-{index}" + (f"  # name of {stem}-{index}\n" if draw(st.booleans()) else "\n"))
    if draw(st.booleans()):
        lines.append("  finalizers: []\n" if draw(st.booleans()) else "  ownerReferences: {}\n")
    if draw(st.booleans()):
        lines += ["  labels:\n", f"    app: {stem}\n"]
    lines.append("data:\n")
    lines.append(f"  plain: value-{index}" + draw(st.sampled_from(["", "\t", " \t", "\t "])) + "\n")
    if draw(st.booleans()):
        lines += [f"  first: &shared{index} shared-{index}\n", f"  second: *shared{index}\n"]
    if draw(st.booleans()):
        lines += ["  script: |\n", "    line one\t\n", "    line two\n"]
    if draw(st.booleans()):
        lines.append("  empty: {}\n" if draw(st.booleans()) else "  nothing: []\n")
    if draw(st.booleans()):
        lines.append(f"  # last words of {stem}-{index}\n")
    return "".join(lines)


@st.composite
def packages(draw: st.DrawFn) -> dict[str, str]:
    """One to three files of one to three documents, every comment naming its file."""
    files = {}
    for number in range(draw(st.integers(1, 3))):
        name = f"f{number}.yaml"
        parts = []
        if draw(st.booleans()):
            parts.append(f"# Copyright {name}\n" + ("\n" if draw(st.booleans()) else ""))
        if draw(st.booleans()):
            parts.append("---\n")
        for index in range(draw(st.integers(1, 3))):
            if index:
                parts.append(draw(st.sampled_from(["---\n", f"--- # opens {name} {index}\n", f"---\n# between in {name} {index}\n\n"])))
            parts.append(_document(draw, name, index))
        if draw(st.booleans()):
            parts.append(f"# end of {name}\n")
        files[name] = "".join(parts)
    return files


def _labelling(line: str) -> bool:
    """A line a labelling function writes: the labels key and the label."""
    stripped = line.strip()
    return stripped.startswith("labels:") or stripped == LABEL.replace("=", ": ")


def _run(image: str, files: dict[str, str]) -> dict[str, str]:
    with tempfile.TemporaryDirectory(prefix="fnrun-owner-") as tmp:
        root = write_package(Path(tmp), files)
        result = fnrun("run", str(root), "--image", image, "--", LABEL)
        assert result.code == 0, result.stderr
        return {name: (root / name).read_text() for name in files}


@pytest.fixture(scope="module")
def images() -> dict[str, str]:
    return {name: project_image(name) for name in ("label", "reorder", "dropcomments")}


@pytest.mark.parametrize("function", ["label", "dropcomments"])
@SLOW
@given(files=packages())
def test_a_labelling_function_changes_only_its_labels(images: dict[str, str], function: str, files: dict[str, str]) -> None:
    """Every line but the label's stays in its file, in its order: headers, separators, comments,
    empty maps, anchors and tabbed lines included."""
    after = _run(images[function], files)
    for name, before in files.items():
        kept = [line for line in before.splitlines() if not _labelling(line)]
        now = [line for line in after[name].splitlines() if not _labelling(line)]
        assert now == kept, (name, before, after[name])
        assert after[name].count(LABEL.replace("=", ": ")) == before.count("apiVersion: v1")


@SLOW
@given(files=packages())
def test_reordering_the_items_changes_no_file(images: dict[str, str], files: dict[str, str]) -> None:
    """ruamel hangs the comments between items on the item before; reversing the list carries them
    off with it. Nothing changed, so every file keeps every byte."""
    assert _run(images["reorder"], files) == files


def test_a_file_header_stays_in_its_file(images: dict[str, str], tmp_path: Path) -> None:
    """Two files, each opening with its own copyright line: after a ruamel round trip that adds a
    label, each still opens with its own."""
    files = {
        "a.yaml": "# Copyright A\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n",
        "b.yaml": "# Copyright B\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n---\n# second\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n",
    }
    write_package(tmp_path, files)
    result = fnrun("run", str(tmp_path), "--image", images["label"], "--", LABEL)
    assert result.code == 0, result.stderr
    assert (tmp_path / "a.yaml").read_text() == "# Copyright A\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  labels:\n    owner: team\n"
    assert (tmp_path / "b.yaml").read_text() == (
        "# Copyright B\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n  labels:\n    owner: team\n"
        "---\n# second\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  labels:\n    owner: team\n"
    )


def test_a_line_ending_in_a_tab_reaches_the_function_parseable(images: dict[str, str], tmp_path: Path) -> None:
    """PyYAML and ruamel refuse a plain value followed by a tab (libyaml takes it): the function gets
    the line without it, a block scalar keeps its tab, and the file keeps its bytes but the label."""
    original = "apiVersion: v1\t\nkind: ConfigMap\nmetadata:\n  name: t\t \ndata:\n  s: |\n    keep\t\n  w: z\t\n"
    (tmp_path / "t.yaml").write_text(original)
    listed = fnrun("source", str(tmp_path))
    assert listed.code == 0, listed.stderr
    assert "- apiVersion: v1\n" in listed.stdout and "    name: t\n" in listed.stdout and "    w: z\n" in listed.stdout
    assert "      keep\t\n" in listed.stdout
    for image in (images["label"], images["dropcomments"]):
        (tmp_path / "t.yaml").write_text(original)
        result = fnrun("run", str(tmp_path), "--image", image, "--", LABEL)
        assert result.code == 0, result.stderr
        written = (tmp_path / "t.yaml").read_text()
        assert written.count("  labels:\n    owner: team\n") == 1, written
        assert written.replace("  labels:\n    owner: team\n", "") == original


def test_a_function_that_restyles_a_block_scalar_writes_no_comment(images: dict[str, str], tmp_path: Path) -> None:
    """PyYAML writes a block scalar as a quoted string: the `#` lines inside it are not comments the
    function wrote, so the original's lines stay (header, key order, odd indentation) and only the
    label is added."""
    original = (
        "# Copyright The Authors\n\napiVersion: v1\nkind: ConfigMap\nmetadata:\n name: defaults\n labels:\n"
        "     app: x\ndata:\n  _example: |\n    # not a comment: text\n    key: value\n  plain: v\n"
    )
    (tmp_path / "defaults.yaml").write_text(original)
    result = fnrun("run", str(tmp_path), "--image", images["dropcomments"], "--", LABEL)
    assert result.code == 0, result.stderr
    assert (tmp_path / "defaults.yaml").read_text() == original.replace("     app: x\n", "     app: x\n     owner: team\n")


def test_parseable_drops_only_blanks_after_a_tab_outside_block_scalars() -> None:
    from orchestrator.yamlio import blanks

    document = "a: b\t\nc: |\n  keep\t\n  more \t\nd: e \nf: g\t \n"
    assert blanks.parseable(document) == "a: b\nc: |\n  keep\t\n  more \t\nd: e \nf: g\n"
    assert blanks.parseable("a: b\n") == "a: b\n"


def test_apart_renames_an_anchor_an_earlier_item_defined() -> None:
    from orchestrator.yamlio import anchors

    first = "a: &x 1\nb: *x\n"
    second = "a: &x 2\nc: &xy 3\nb: [*x, *xy]\n"
    assert anchors.apart(first) == (first, {"x"})
    assert anchors.apart(second, {"x"}) == ("a: &x-2 2\nc: &xy 3\nb: [*x-2, *xy]\n", {"x-2", "xy"})
    assert anchors.apart("z: 1\n", {"x", "x-2", "xy"}) == ("z: 1\n", set())


def test_what_yaml_1_1_reads_otherwise_reaches_the_function_quoted(images: dict[str, str], tmp_path: Path) -> None:
    """`on` and `no` are strings to fnrun (YAML 1.2) and booleans to PyYAML; `=` is a type PyYAML
    refuses. The function gets them quoted, so it keeps them strings, and the file keeps its text."""
    original = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ops\ndata:\n  on: 'x'\n  flag: no\n  ops: [=, on]\n"
    (tmp_path / "ops.yaml").write_text(original)
    result = fnrun("run", str(tmp_path), "--image", images["dropcomments"], "--", LABEL)
    assert result.code == 0, result.stderr
    written = (tmp_path / "ops.yaml").read_text()
    assert written.count("  labels:\n    owner: team\n") == 1, written
    assert written.replace("  labels:\n    owner: team\n", "") == original


def test_what_is_sent_normalized_still_sinks_as_written(tmp_path: Path) -> None:
    """`fnrun source DIR | fnrun sink NEW` has no original to compare with: the items fnrun sent
    changed (a tab-ended line, `on`, an anchor two files define) carry the document as written, and
    the new files hold the old bytes."""
    files = {
        "a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  on: x\n  b: c\t\n  d: &same 1\n  e: *same\n",
        "b.yaml": "# B\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\ndata:\n  d: &same 2\n  e: *same\n",
    }
    write_package(tmp_path / "old", files)
    listed = fnrun("source", str(tmp_path / "old"))
    assert listed.code == 0, listed.stderr
    assert "'on': x" in listed.stdout
    sunk = fnrun("sink", str(tmp_path / "new"), stdin=listed.stdout)
    assert sunk.code == 0, sunk.stderr
    assert {name: (tmp_path / "new" / name).read_text() for name in files} == files
