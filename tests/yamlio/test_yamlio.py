"""The YAML layer underneath: the strict libyaml fast path, line-exact text operations, the
round-trip editor (style detection, alias-safe sync, diff3 merge) and the ResourceList codec."""

from __future__ import annotations

import pytest

from orchestrator import annotations as ann
from orchestrator.errors import InputError
from orchestrator.read.package import parse_stream
from orchestrator.resource import Resource
from orchestrator.run import resourcelist
from orchestrator.yamlio import comments, diff3, fast, roundtrip, text

DOC = "# head\napiVersion: v1\nkind: A\nmetadata:\n  name: a  # inline\nspec:\n  x: 1\n"


# --- fast path -------------------------------------------------------------------------------

def test_duplicate_key_is_an_error_with_file_and_line() -> None:
    with pytest.raises(InputError, match=r"^f.yaml:5: duplicate key 'name'$"):
        fast.load("apiVersion: v1\nkind: A\nmetadata:\n  name: a\n  name: b\n", "f.yaml")


def test_malformed_yaml_names_the_line_including_an_offset() -> None:
    # libyaml notices the unclosed `[` on the third line: 3 + 11
    with pytest.raises(InputError, match=r"^f.yaml:14: .*expected ',' or ']'"):
        fast.load("a: 1\nb: [1\nc: 2\n", "f.yaml", line_offset=11)


def test_core_schema_and_aliases() -> None:
    value = fast.load("a: &x {k: [1, 2.5, true, null, '1']}\nb: *x\nc: yes\nd: .inf\ne: 0o17\n<<: {m: 1}\n", "t")
    assert value == {"a": {"k": [1, 2.5, True, None, "1"]}, "b": {"k": [1, 2.5, True, None, "1"]}, "c": "yes", "d": float("inf"), "e": 15, "m": 1}
    assert value["a"] is value["b"]


def test_invalid_utf8_names_the_line() -> None:
    with pytest.raises(InputError, match=r"^f.yaml:2: invalid UTF-8 \(byte 5\)$"):
        fast.decode(b"a: 1\n\xff\n", "f.yaml")


# --- text ------------------------------------------------------------------------------------

def test_split_documents_keeps_separators_and_lines() -> None:
    segments = text.split_documents("--- # start\na: 1\n...\n---\nb: 2\n")
    assert [(s.text, s.start_line, s.separator) for s in segments] == [
        ("--- # start\n", 0, True), ("a: 1\n", 1, False), ("...\n", 2, True), ("---\n", 3, True), ("b: 2\n", 4, False)
    ]
    assert text.is_separator("---\n") and text.is_separator("... # end") and not text.is_separator("----\n")


def test_stamp_then_strip_restores_the_bytes() -> None:
    node, _ = fast.parse(DOC, "t")
    stamped = text.stamp(DOC, node, [(ann.PATH, "'a.yaml'"), (ann.INDEX, "'0'")])
    assert stamped == DOC.replace("metadata:\n", "metadata:\n  annotations:\n    config.kubernetes.io/path: 'a.yaml'\n    config.kubernetes.io/index: '0'\n")
    stamped_node, _ = fast.parse(stamped, "t")
    doomed = text.strip_lines(stamped.splitlines(keepends=True), stamped_node, ann.STRIPPED_KEYS)
    assert text.delete_lines(stamped, doomed) == DOC


def test_stamp_into_existing_annotations_uses_their_column() -> None:
    doc = "apiVersion: v1\nkind: A\nmetadata:\n    name: a\n    annotations:\n        x: y\n"
    node, _ = fast.parse(doc, "t")
    assert text.stamp(doc, node, [(ann.PATH, "p")]) == doc.replace("        x: y\n", "        config.kubernetes.io/path: p\n        x: y\n")


@pytest.mark.parametrize("doc", [
    "apiVersion: v1\nkind: List\nitems: []\n",
    "# head\napiVersion: v1\n# the items\nitems:\n- kind: A  # one\nkind: List\n",
    "apiVersion: v1\nkind: ConfigMap\ndata:\n  script: |\n    # not a comment\n    run\n# tail\n",
])
def test_a_document_without_metadata_gets_one_as_lines_and_loses_it_again(doc: str) -> None:
    """A `kind: List` has no metadata: the annotations come in a metadata of their own, after
    the first key (a document's first line shares a list item's dash), and stripping them takes
    it away again, byte for byte. Before, such a document went through the round trip, a second
    of ruamel for a megabyte of Grafana dashboards, and carried its whole text in a note."""
    node, value = fast.parse(doc, "t")
    stamped = text.stamp(doc, node, [(ann.PATH, "'a.yaml'"), (ann.INDEX, "'0'")])
    assert stamped is not None
    stamped_node, stamped_value = fast.parse(stamped, "t")
    assert stamped_value == {**value, "metadata": {"annotations": {ann.PATH: "a.yaml", ann.INDEX: "0"}}}
    as_item = text.indent_item(stamped).splitlines(keepends=True)
    item_node = fast.compose("".join(as_item), "t").value[0]
    doomed = text.strip_lines(as_item, item_node, ann.STRIPPED_KEYS, note=ann.ORIGINAL)
    assert doomed is not None
    kept = "".join(line for n, line in enumerate(as_item) if n not in set(doomed))
    assert kept == text.indent_item(doc)


@pytest.mark.parametrize("metadata", [
    "metadata:\n  annotations:\n    internal.config.kubernetes.io/fnrun-original: \"a: 1\\n\"\n",  # read with a metadata of its own
    "metadata: &m\n  annotations:\n    config.kubernetes.io/path: p\n",  # an alias may repeat it
])
def test_a_metadata_of_fnrun_s_annotations_stays_where_it_may_be_the_document_s(metadata: str) -> None:
    doc = "apiVersion: v1\nkind: A\n" + metadata
    node, _ = fast.parse(doc, "t")
    assert text.strip_lines(doc.splitlines(keepends=True), node, ann.STRIPPED_KEYS, note=ann.ORIGINAL) is None


def test_a_document_that_is_one_key_is_not_stamped_as_lines() -> None:
    doc = "items: []\n"
    assert text.stamp(doc, fast.compose(doc, "t"), [(ann.PATH, "p")]) is None


@pytest.mark.parametrize("doc", ["apiVersion: v1\nkind: A\nmetadata: {name: a}\n", "{apiVersion: v1, kind: A}\n"])
def test_stamp_declines_layouts_it_cannot_edit_as_lines(doc: str) -> None:
    node, _ = fast.parse(doc, "t")
    assert text.stamp(doc, node, [(ann.PATH, "p")]) is None


def test_quote_of_stamped_values() -> None:
    assert text.quote("a/b.yaml") == "'a/b.yaml'" and text.quote("it's") == "'it''s'"
    assert text.quote("---\nx\n") == '"---\\nx\\n"'


def test_indent_and_dedent_item_are_inverse() -> None:
    item = text.indent_item(DOC)
    assert item == "# head\n- apiVersion: v1\n  kind: A\n  metadata:\n    name: a  # inline\n  spec:\n    x: 1\n"
    lines = item.splitlines(keepends=True)
    assert text.dedent_item(lines, 1, 0, 2) == DOC


def test_comments_ignore_hashes_inside_quotes() -> None:
    assert comments.comments("a: 'x # not'  # yes\nb: \"#no\"\n  # full line\nc: d#e\n") == ["yes", "full line"]


# --- round trip ------------------------------------------------------------------------------

@pytest.mark.parametrize(
    "doc, style",
    [
        ("a:\n  b:\n  - x\n", roundtrip.Style(2, 2, 0)),
        ("a:\n  b:\n    - x\n", roundtrip.Style(2, 4, 2)),
        ("a:\n    b:\n    -   x\n", roundtrip.Style(4, 4, 0)),
        ("a:\n    b:\n        -   x\n", roundtrip.Style(4, 8, 4)),
        ("a:\n    b:\n      - x\n", roundtrip.Style(4, 4, 2)),
        ("a:\n    b: 1\n", roundtrip.Style(4, 4, 2)),
        ("- name: a\n  args:\n  - x\n", roundtrip.Style(2, 2, 0)),
    ],
)
def test_detect_style(doc: str, style: roundtrip.Style) -> None:
    assert roundtrip.detect_style(doc) == style


def test_sync_breaks_an_alias_only_where_values_differ() -> None:
    tree = roundtrip.load("a: &x {k: 1}\nb: *x\nc: *x\n")
    synced = roundtrip.sync(tree, {"a": {"k": 1}, "b": {"k": 2}, "c": {"k": 1}})
    assert roundtrip.dump(synced, roundtrip.Style()) == "a: &x {k: 1}\nb:\n  k: 2\nc: *x\n"


def test_sync_edits_a_shared_node_in_place_when_all_places_agree() -> None:
    tree = roundtrip.load("a: &x {k: 1}\nb: *x\n")
    synced = roundtrip.sync(tree, {"a": {"k": 3}, "b": {"k": 3}})
    assert roundtrip.dump(synced, roundtrip.Style()) == "a: &x {k: 3}\nb: *x\n"


def test_merge_lines_applies_base_to_new_onto_the_original() -> None:
    original = ["a:   1  # mine\n", "b: [ 1 ]\n", "c: 3\n"]
    base = ["a: 1  # mine\n", "b: [1]\n", "c: 3\n"]
    new = ["a: 1  # mine\n", "b: [1]\n", "d: 4\n", "c: 3\n"]
    assert diff3.merge_lines(original, base, new) == ["a:   1  # mine\n", "b: [ 1 ]\n", "d: 4\n", "c: 3\n"]


def test_edit_falls_back_when_a_merge_would_not_mean_the_data() -> None:
    """Whatever the merge does, the result always parses to exactly the edited value."""
    original = "a: &x\n  k: 1\nb: *x\nlist: [1,\n  2]\n"
    data = {"a": {"k": 1}, "b": {"k": 2, "z": [1]}, "list": [1, 2, 3]}
    assert fast.load(roundtrip.edit(original, None, data), "t") == data


def test_edit_with_function_text_takes_its_comments_and_keeps_original_styles() -> None:
    original = "a: 'x'\nb: 1\n"
    function_text = "a: x  # from the function\nb: 2\n"
    assert roundtrip.edit(original, function_text, {"a": "x", "b": 2}) == "a: 'x' # from the function\nb: 2\n"


def test_same_tells_types_apart() -> None:
    assert roundtrip.same({"a": [1, "1"]}, {"a": [1, "1"]})
    assert not roundtrip.same(True, 1) and not roundtrip.same("1", 1) and not roundtrip.same([1], (1,))
    assert not roundtrip.same({"a": 1}, {"b": 1})


def test_render_keeps_text_that_already_agrees() -> None:
    assert roundtrip.render("a:   1  # c\n", {"a": 1}) == "a:   1  # c\n"
    assert roundtrip.render(None, {"a": {"b": [1]}}) == "a:\n  b:\n  - 1\n"


# --- ResourceList codec ------------------------------------------------------------------------

def _resources(stream: str) -> list[Resource]:
    return parse_stream(stream, "t", path="f.yaml")


def test_encode_decode_round_trip_keeps_item_texts_and_function_config() -> None:
    items = _resources(DOC + "---\n# second\napiVersion: v1\nkind: B\nmetadata:\n  name: b\n")
    encoded = resourcelist.encode(items, {"apiVersion": "v1", "kind": "ConfigMap", "data": {"k": "v"}})
    decoded = resourcelist.decode(encoded, "t")
    assert [i.text for i in decoded.items] == [i.text for i in items]
    assert [i.body for i in decoded.items] == [i.body for i in items]
    assert decoded.function_config == {"apiVersion": "v1", "kind": "ConfigMap", "data": {"k": "v"}}
    assert decoded.kind == "ResourceList"


def test_decode_keeps_several_head_comment_lines_of_the_first_item() -> None:
    listing = "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n# one\n# two\n- apiVersion: v1\n  kind: A\n"
    (item,) = resourcelist.decode(listing, "t").items
    assert item.text == "# one\n# two\napiVersion: v1\nkind: A\n"


def test_decode_results_and_empty_forms() -> None:
    decoded = resourcelist.decode("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\nresults:\n- message: hi\n  severity: info\n", "t")
    assert decoded.items == [] and decoded.results == [{"message": "hi", "severity": "info"}]
    assert resourcelist.decode("", "t").items == [] and resourcelist.decode("# nothing\n", "t").kind == "stream"
    assert resourcelist.encode([]) == "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\n"


def test_decode_stream_strips_stamped_annotations_from_the_body() -> None:
    stamped = "apiVersion: v1\nkind: A\nmetadata:\n  annotations:\n    config.kubernetes.io/path: 'x.yaml'\n  name: a\n"
    (item,) = resourcelist.decode(stamped, "t").items
    assert item.body == "apiVersion: v1\nkind: A\nmetadata:\n  name: a\n" and item.path == "x.yaml"


@pytest.mark.parametrize(
    "listing, message",
    [
        ("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: {a: 1}\n", r"^t:3: ResourceList items must be a list$"),
        ("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- kind: A\n", r"^t:4: items\[0\] is a mapping without apiVersion or kind"),
        ("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- 3\n", r"^t:4: items\[0\] is a scalar"),
        ("apiVersion: config.kubernetes.io/v2\nkind: ResourceList\nitems: []\n", r"^t:1: ResourceList with unsupported apiVersion 'config.kubernetes.io/v2'"),
        ("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\nfunctionConfig: [1]\n", r"^t:4: functionConfig must be a mapping$"),
        ("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\nresults: 1\n", r"^t:4: results must be a list$"),
        ("a: 1\n---\nb: 2\n", r"^t:1: expected a resource .* found a mapping without apiVersion or kind$"),
        ("apiVersion: v1\nkind: A\n---\n- 1\n", r"^t:4: expected a resource .* found a list$"),
    ],
)
def test_decode_rejects_what_is_not_a_resource_list(listing: str, message: str) -> None:
    with pytest.raises(InputError, match=message):
        resourcelist.decode(listing, "t")


def test_same_tells_types_apart_on_its_fast_path_and_its_walk() -> None:
    """`roundtrip.same` answers most calls from marshal bytes; both ways must stay type-strict."""
    from ruamel.yaml.comments import CommentedMap

    from orchestrator.yamlio.roundtrip import same

    nested = {"a": [1, {"b": "x"}], "c": None}
    for a, b in ((True, 1), ("1", 1), (False, 0), ({"k": True}, {"k": 1}), ([1, "2"], [1, 2]), ({"a": [1, {"b": "x"}], "c": 0}, nested)):
        assert not same(a, b) and not same(b, a)
    assert same(1, 1.0) and same([1, 2], [1, 2.0])  # numbers compare by value, as they always did (marshal bytes differ: the walk says)
    key = "".join(["a", ""])  # a key that is not the interned literal
    assert same(nested, {key: [1, {"b": "x"}], "c": None})
    assert same({"x": 1, "y": 2}, {"y": 2, "x": 1})  # key order is layout, not value (the walk)
    assert same(CommentedMap(nested), nested) and not same(CommentedMap({"k": True}), {"k": 1})
    assert not same(float("nan"), float("nan"))
