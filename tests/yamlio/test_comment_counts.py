"""The round-trip editor writes each comment as often as the text it takes comments from holds it:
a comment a function moved, or that a re-indent shifted, is not also kept at its old place, and
one ruamel repeats where it expands an alias is written once. (The write-back fuzzer,
tests/write/test_fuzz_writeback.py, checks the counts over generated packages.)"""

from __future__ import annotations

import io
from collections import Counter

import pytest

from orchestrator.yamlio import diff3, fast, roundtrip
from orchestrator.yamlio.comments import comments

HEAD = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: r1\n"


def test_a_comment_the_new_version_moved_is_not_also_kept_where_it_was() -> None:
    """The original's comment stands at another indentation than in ruamel's dump of it (base),
    so the hunk there conflicts and would keep it; the new version has it at its new place."""
    original = ["a: 1\n", "    # c\n", "b: 2\n", "d: 3\n"]
    base = ["a: 1\n", "# c\n", "b: 2\n", "d: 3\n"]
    new = ["a: 5\n", "b: 2\n", "d: 3\n", "# c\n"]
    assert diff3.merge_lines(original, base, new, ["c"]) == ["a: 5\n", "b: 2\n", "d: 3\n", "# c\n"]


def test_a_comment_a_hunk_drops_is_still_kept_when_the_new_version_lost_it() -> None:
    original = ["a: 1\n", "# c\n", "b: 2\n"]
    new = ["a: 5\n", "b: 2\n"]
    assert diff3.merge_lines(original, original, new, ["c"]) == ["a: 5\n", "# c\n", "b: 2\n"]


def test_a_comment_written_twice_by_the_new_version_is_written_once() -> None:
    original = ["a: &x 1  # c\n", "b: *x\n"]
    base = ["a: &x 1  # c\n", "b: *x\n"]
    new = ["a: 2  # c\n", "b: &x 1  # c\n"]
    assert diff3.merge_lines(original, base, new, ["c"]) == ["a: 2  # c\n", "b: &x 1\n"]


@pytest.mark.parametrize("body, change", [
    ("data:\n  a: &x v\n  # note\n  b: *x  # inline\n  c: 1\n", lambda d: d["data"].update(a="w")),
    ("data:\n  list:\n  - &x v\n  # note\n  - *x\n  c: 1\n", lambda d: d["data"]["list"].__setitem__(0, "w")),
    ("data:\n  a: &x \"v\\nw\"  # note\n\n  # note\n  b: 1\n  c: *x\n", lambda d: d["data"].update(a="z")),
])
def test_an_alias_whose_anchor_changed_keeps_each_comment_once(body: str, change) -> None:
    """The alias gets a copy of the old value (with the anchor, which ruamel hangs the anchor's
    comments on too); every comment stays, once."""
    original = HEAD + body
    data = fast.load(original, "t")
    change(data)
    for new_text in (None, original):
        edited = roundtrip.edit(original, new_text, data)
        assert fast.load(edited, "t") == data
        assert Counter(comments(edited)) == Counter(comments(original)), edited


@pytest.mark.parametrize("body, change", [
    # a block scalar replaced: ruamel loses the comment below it and the next item's header comment
    ("data:\n- - |\n    delta kube\n  # above\n  - |-  # header\n    delta\n  - false\n# next\n- # inside\n  owner: x\n",
     lambda d: d["data"][0].__setitem__(0, "beta")),
    # an anchored boolean, and comments around a keep block scalar that ruamel re-indents as clip
    ("metadata:\n    name: r1\nextra:\n    zone:\n        - &a2 false  # one\n        # two\n        - |+  # three\n            rocket\n            delta\n"
     "    # four\n    image: &a3 \"with space\"  # five\n    # six\n    owner: x\n",
     lambda d: d["extra"].update(image="beta")),
])
def test_comments_around_an_edited_block_scalar_stay_where_they_were(body: str, change) -> None:
    original = (HEAD if body.startswith("data") else HEAD.split("metadata:")[0]) + body
    data = fast.load(original, "t")
    change(data)
    edited = roundtrip.edit(original, None, data)
    assert fast.load(edited, "t") == data
    assert Counter(comments(edited)) == Counter(comments(original)), edited
    kept = [line for line in original.splitlines() if line.lstrip().startswith("#")]
    assert [line for line in edited.splitlines() if line.lstrip().startswith("#")] == kept, edited


def test_an_anchored_boolean_that_did_not_change_keeps_its_anchor() -> None:
    original = HEAD + "data:\n  a: &t true  # c\n  b: 1\n"
    data = fast.load(original, "t")
    data["data"]["b"] = 2
    assert roundtrip.same(roundtrip.load(original)["data"]["a"], True)
    assert not roundtrip.same(roundtrip.load(original)["data"]["a"], 1)
    assert "a: &t true  # c\n" in roundtrip.edit(original, None, data)


@pytest.mark.parametrize("value", ["1", ">\n    kube", "|-\n    kube\n    x"])
def test_a_comment_above_a_key_that_becomes_its_items_first_stays_above_it(value: str) -> None:
    """The keys above it deleted, the key gains its item's dash (`- port:`), and ruamel loses the
    comment with the deleted key it hangs it on: the merge puts it back above the same line, not
    after the hunk (where it stood between a block scalar's header and its text, and the merge
    was refused for ruamel's dump, without the comment)."""
    original = HEAD + f"list:\n- path: x\n  level: false\n\n  # hash\n  port: {value}\n  mode: 1\n"
    data = fast.load(original, "t")
    del data["list"][0]["path"], data["list"][0]["level"]
    edited = roundtrip.edit(original, None, data)
    assert fast.load(edited, "t") == data
    assert f"  # hash\n- port: {value}\n" in edited, edited


def test_a_kept_comment_never_lands_in_a_block_scalars_text() -> None:
    """A comment a hunk would drop, with no line of the new version to stand above, goes after the
    hunk; when the hunk's last line opens a block scalar, the scalar's text follows it, so the
    comment goes above that line."""
    original = ["a:\n", "- x: 1\n", "  # c\n", "  y: 2\n", "  z: |\n", "    t\n"]
    new = ["a:\n", "- q: |\n", "    t\n"]
    assert diff3.merge_lines(original, original, new, ["c"]) == ["a:\n", "  # c\n", "- q: |\n", "    t\n"]


@pytest.mark.parametrize("body", [
    "data:\n  list:\n  - |-\n    alpha\n    beta\n\n  # note\n  other: 1\n",
    "data:\n- x\n- |-\n  alpha\n\n# note\nspec: 1\n",
    "data:\n- - |-\n    alpha\n\n  # note\n  - y\n",
])
def test_a_comment_after_a_block_scalar_ending_an_item_is_written_once_through_a_reindent(body: str) -> None:
    """A ruamel function that indents sequences (kyaml's `wide` style) writes the comment after a
    block scalar that ends a sequence item at a new indentation; the merge keeps it once."""
    from ruamel.yaml import YAML

    original = HEAD + body
    library = YAML()
    library.indent(mapping=2, sequence=4, offset=2)
    tree = library.load(original)
    tree["metadata"]["added"] = "x"
    out = io.StringIO()
    library.dump(tree, out)
    data = fast.load(original, "t")
    data["metadata"]["added"] = "x"
    edited = roundtrip.edit(original, out.getvalue(), data)
    assert fast.load(edited, "t") == data
    assert Counter(comments(edited)) == Counter(comments(original)), edited
