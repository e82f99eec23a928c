"""A changed item's text is rendered once (`Resource.value_text`): the value, without fnrun's
annotations, over the item's base text. It used to be rendered twice: the base text with the
annotated value first (`Resource.text`), then the value over that. This differential test holds
the new way to the old one, byte for byte, over random documents (tests/testing/yaml_fuzz.py's:
comments, flow collections, quotes, block scalars, anchors, 2- and 4-space indents) read as the
package reader reads them, with annotations of their own (commented, quoted, flow, empty), and
random changes a function makes: to the value and to the annotations, fnrun's and the user's,
added, removed and changed."""

from __future__ import annotations

import copy
import difflib
import re
from typing import Any

from hypothesis import HealthCheck, event, given, settings, strategies as st

from orchestrator import annotations as ann
from orchestrator.errors import InputError
from orchestrator.kinds import Kind
from orchestrator.merge.scope import package_relative, reconcile
from orchestrator.read.package import read_file
from orchestrator.resource import Resource
from orchestrator.select.functions import FunctionSpec
from orchestrator.yamlio import fast, roundtrip
from testing import yaml_fuzz
from testing.sizing import examples
from testing.yaml_fuzz import COMMENTS, Layout, Node, apply, documents

FAST = settings(max_examples=examples(100), deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])

#: Annotations a user's file may hold: its own, kpt's, and (rarely written by hand) fnrun's.
FILE_KEYS = ("example.com/note", ann.LOCAL_CONFIG, "app.kubernetes.io/part-of", ann.INDEX, ann.SEQINDENT)
#: Annotations a function may set or remove: fnrun's (a moved or renumbered item) and the user's.
FUNCTION_KEYS = (*ann.ORCHESTRATION_KEYS, ann.PREFIX, ann.SUFFIX, "example.com/note", "example.com/new", ann.LOCAL_CONFIG)
VALUES = ("sub/f.yaml", "f.yaml", "other/g.yaml", "0", "1", "true", "x y", "multi\nline", "---\n", "")


def two_renders(item: Resource) -> str:
    """The old way: the annotated text first, then the value over it."""
    return roundtrip.render(item.text, item.value)


@st.composite
def annotation_values(draw: st.DrawFn) -> Node:
    value = draw(st.sampled_from(VALUES))
    styles = ['"'] if "\n" in value or not value else ["'", '"', "plain"]
    if "\n" in value and value.strip():
        styles += ["|", "|-"]
    style = draw(st.sampled_from(styles))
    if style == "plain" and not yaml_fuzz._plain_ok(value):
        style = "'"
    if style == "|":
        value += "\n"
    return Node(value, style)


@st.composite
def annotated(draw: st.DrawFn, name: str) -> Node:
    """One of yaml_fuzz's documents, with an annotations map of its own under metadata: block
    (entries with comments above and after them) or flow, or empty."""
    doc = draw(documents(name))
    if draw(st.integers(0, 3)) == 0:
        return doc
    keys = draw(st.lists(st.sampled_from(FILE_KEYS), max_size=3, unique=True))
    children = [(key, draw(annotation_values())) for key in keys]
    node = Node({k: c.value for k, c in children}, children=children)
    flow = children and all(c.style != "|" and c.style != "|-" for _, c in children) and draw(st.integers(0, 3)) == 0
    if flow or not children:
        node.flow = bool(children)
    else:
        for _, child in children:
            if draw(st.integers(0, 2)) == 0:
                child.inline = draw(st.sampled_from(COMMENTS))
            if draw(st.integers(0, 3)) == 0:
                child.head = draw(st.sampled_from(COMMENTS))
    if draw(st.integers(0, 3)) == 0:
        node.inline = draw(st.sampled_from(COMMENTS)) if node.flow else None
    metadata = dict(doc.children)["metadata"]  # type: ignore[arg-type]
    metadata.children.insert(draw(st.integers(0, len(metadata.children))), ("annotations", node))  # type: ignore[union-attr, arg-type]
    return doc


@st.composite
def read_items(draw: st.DrawFn) -> list[Resource]:
    """The items of one random package file, as the reader stamps them."""
    layout = Layout(step=draw(st.sampled_from([2, 4])), wide=draw(st.booleans()))
    docs = [draw(annotated(f"r{n}")) for n in range(draw(st.integers(1, 2)))]
    text = "---\n".join("\n".join(yaml_fuzz.render(doc, 0, layout)) + "\n" for doc in docs)
    try:
        items = read_file("sub/f.yaml", text.encode())[1]
    except InputError:  # a generated file the reader refuses (an annotation fnrun stamps written twice)
        items = []
    return items


@st.composite
def changed(draw: st.DrawFn, data: dict) -> dict:
    """What a function may make of an item: edits of its value (yaml_fuzz's, annotations
    included) and of its annotations."""
    new = copy.deepcopy(data)
    ops = draw(yaml_fuzz.edits(yaml_fuzz.Package({}, {"f.yaml": [new]})))
    apply([new], [op for op in ops if op[0] not in ("drop", "new")])
    for _ in range(draw(st.integers(0, 3))):
        meta = new.setdefault("metadata", {})
        if not isinstance(meta, dict):
            break
        notes = meta.get("annotations")
        if not isinstance(notes, dict):
            notes = meta["annotations"] = {}
        key = draw(st.sampled_from(FUNCTION_KEYS))
        if key in notes and draw(st.booleans()):
            del notes[key]
        else:
            notes[key] = draw(st.sampled_from(VALUES))
    return new


def outcome(render: Any, item: Resource) -> tuple[str, str]:
    try:
        return "text", render(item)
    except Exception as err:  # noqa: BLE001 - the two ways must fail alike too
        return "error", type(err).__name__


def comment_gaps_closed(text: str) -> str:
    """The text with every run of spaces before a `#` made one space."""
    return re.sub(" +#", " #", text)


def kept_lines(user: str, text: str) -> int:
    """How many of the user's lines a text keeps, in order."""
    matcher = difflib.SequenceMatcher(None, user.splitlines(), text.splitlines(), autojunk=False)
    return sum(block.size for block in matcher.get_matching_blocks())


def unreadable(text: str) -> bool:
    try:
        fast.load(text, "annotated text")
    except InputError:
        return True
    return False


@FAST
@given(st.data())
def test_one_render_is_the_two_renders(data: st.DataObject) -> None:
    """Byte for byte the same, except where the two renders' first made what ruamel cannot read
    again as it wrote it; there the one render is the right one:
    - ruamel writes nested block sequences (`- - a`) indented otherwise than it reads them, so
      the annotated text's indentation differs from the base's and the second render re-indents
      lines nobody changed: the one render keeps at least as many of the user's lines, and
      means the value;
    - ruamel's dump of the annotated value is not YAML (a comment before a sequence that was
      emptied), and the second render failed reading it: the one render never reads it;
    - a comment after a flow collection that fnrun's annotations made longer (its original kept
      in an annotation, for a document with anchors) keeps the longer line's column in both, so
      the gap before it differs: the same text but for that gap, never a wider one."""
    items = data.draw(read_items(), label="items")
    for item in items:
        new = data.draw(changed(item.data), label=f"value of {item!r}")
        before = item.replaced(copy.deepcopy(new))
        old, one = outcome(two_renders, before), outcome(Resource.value_text, item.replaced(new))
        if old == one:
            event("the same")
            continue
        annotated = roundtrip.render(before._text, before.data)
        if old[0] == "error":
            event("the two renders failed reading the first's output")
            assert unreadable(annotated), (old, one)
            continue
        if old[0] == one[0] == "text" and comment_gaps_closed(old[1]) == comment_gaps_closed(one[1]):
            event("a comment kept a longer line's column")
            assert len(one[1]) <= len(old[1]), (old, one)
            continue
        event("ruamel re-indented nested sequences in the first render")
        assert item.body is not None and one[0] == "text", (old, one)
        assert roundtrip.detect_style(annotated) != roundtrip.detect_style(before._text or ""), (old, one)
        assert roundtrip.means(one[1], before.value), one
        assert kept_lines(item.body, one[1]) >= kept_lines(item.body, old[1]), (old, one)


@FAST
@given(st.data())
def test_text_already_made_and_no_base_text(data: st.DataObject) -> None:
    """Where `text` was already made (the function read it), the value is rendered over it, as
    before; an item with no base text (made by a function) is rendered from nothing."""
    items = data.draw(read_items(), label="items") or [Resource({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "r0"}})]
    for item in items:
        new = data.draw(changed(item.data), label=f"value of {item!r}")
        seen = item.replaced(copy.deepcopy(new))
        outcome(lambda made: made.text, seen)  # made, as a function reading it makes it
        assert outcome(Resource.value_text, seen) == outcome(two_renders, item.replaced(copy.deepcopy(new)))
        for made in (Resource(copy.deepcopy(new)), Resource(copy.deepcopy(new), fresh=False)):
            assert outcome(Resource.value_text, made) == outcome(two_renders, made)


def test_a_subpackage_step_round_trip_keeps_the_comments() -> None:
    """Through scope's own path: a changed item rebased to its subpackage and back keeps its
    comments and its annotations' layout, and carries the paths the step should see."""
    text = (
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web # the name\n  annotations:\n"
        "    example.com/note: 'kept' # a note\n    config.kubernetes.io/local-config: \"true\"\ndata: {a: b}\n"
    )
    item = read_file("sub/f.yaml", text.encode())[1][0]
    value = copy.deepcopy(item.data)
    value["data"]["a"] = "c"
    spec = FunctionSpec(Kind.CONTAINER, image="fn", declared_in="sub/Kptfile")
    inner = package_relative(spec, [item.replaced(value)])[0]
    assert inner.path == "f.yaml" and inner.fresh
    assert inner.body == text.replace("{a: b}", "{a: c}")
    back = reconcile(spec, [inner], [inner], package_paths=True)[0]
    assert back.path == "sub/f.yaml" and back.body == inner.body
