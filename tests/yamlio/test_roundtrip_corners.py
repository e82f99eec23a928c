"""The round-trip editor where ruamel itself fails or misplaces a comment: the edit still means
the value asked for, and the document's own lines stay where nothing changed."""

from __future__ import annotations

from orchestrator.yamlio import fast, roundtrip

ALIASED = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  a: &x |  # note\n  b: v\nlist:\n- *x\n"


def test_an_edit_ruamels_emitter_fails_on() -> None:
    """The anchored value changes and its alias keeps the old one: ruamel's emitter then raises on
    the comment it hung on the scalar."""
    value = fast.load(ALIASED, "t")
    value["data"]["a"] = "w"
    edited = roundtrip.edit(ALIASED, None, value)
    assert fast.load(edited, "t") == value
    assert edited.replace("  a: w\n", "").replace("- ''\n", "") == ALIASED.replace("  a: &x |  # note\n", "").replace("- *x\n", "")


def test_an_emptied_list_whose_first_item_had_a_comment_above() -> None:
    original = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a  # mine\nlist:\n  # c\n  - x\nnext: 1  # n\n"
    value = fast.load(original, "t")
    value["list"] = []
    edited = roundtrip.edit(original, None, value)
    assert fast.load(edited, "t") == value
    assert edited.startswith("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a  # mine\n")
    assert edited.endswith("next: 1  # n\n")
