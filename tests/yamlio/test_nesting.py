"""The nesting bound is never below the real depth, whatever the layout; it stays small on long
documents that do not nest, so they are parsed once, not counted first."""

from __future__ import annotations

import yaml
from hypothesis import given, settings, strategies as st

from orchestrator.yamlio import nesting
from testing.sizing import examples


def depth(text: str) -> int:
    deepest = level = 0
    for event in yaml.parse(text, Loader=yaml.CSafeLoader):
        if isinstance(event, yaml.CollectionStartEvent):
            level += 1
            deepest = max(deepest, level)
        elif isinstance(event, yaml.CollectionEndEvent):
            level -= 1
    return deepest


_scalars = st.one_of(st.sampled_from(["a", "x-y", "- not", "? q", "1", "", "a: b", "[x]"]), st.integers())
_trees = st.recursive(
    _scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(["k", "key-2", "? e", "-"]), inner, max_size=3)),
    max_leaves=40,
)


@settings(max_examples=examples(300), deadline=None)
@given(tree=_trees, indent=st.integers(2, 9), flow=st.sampled_from([False, True, None]), crlf=st.booleans())
def test_the_bound_holds_for_any_layout_of_any_tree(tree: object, indent: int, flow: bool | None, crlf: bool) -> None:
    text = yaml.dump(tree, Dumper=yaml.CSafeDumper, indent=indent, default_flow_style=flow)
    if crlf:
        text = text.replace("\n", "\r\n")
    for variant in padded(text):
        assert holds(variant), variant


def padded(text: str) -> list[str]:
    """The text as it is (short: bounded by its length), and long enough to be counted: with a
    comment that has no marks, and one full of hyphens in words (the indicators are counted)."""
    return [text, text + "#" + "x" * 12_000 + "\n", text + "#" + "-x" * 12_000 + "\n"]


def holds(text: str, enough: int = 10_000) -> bool:
    """bound's contract: at least the real depth, unless it says `enough` or more."""
    found = nesting.bound(text, enough)
    return found >= enough or found >= depth(text)


COMPACT = [
    "x:\n- - - - a\n",  # compact sequences in an indentless one
    "x:\n- a: b\n",  # a compact mapping in an indentless sequence
    "x:\n  y:\n  - a: b\n  - c:\n    - d: e\n",
    "? a\n: b: c\n",  # an explicit key's compact value
    "? a\n: ? b\n  : ? c\n    : d\n",
    "- a:\n  - b: [c: [d: {e: [f]}]]\n",  # single-pair mappings in flow sequences
    "&x a:\n  &y b:\n    !!map c: d\n",
    "a:\n  b:\n    c:\n      d: e\n",
    "k: [a,\n  [b,\n    [c]]]\n",
    "k: [a: [b: [c: [d: e]]]]\n",  # each `[` holds a sequence and a pair's mapping
    "- - - -\n",
    "a:\r  b:\r    c: d\r",  # only \r breaks: one level a line
    "a:\u2028  b: c\n",
]


def test_the_bound_holds_for_compact_and_odd_forms() -> None:
    for text in COMPACT:
        try:
            depth(text)
        except yaml.YAMLError:
            continue
        assert all(holds(variant) for variant in padded(text)), text


def test_a_long_document_that_does_not_nest_has_a_small_bound() -> None:
    crd_like = "spec:\n  properties:\n" + "".join(
        f"    field{i}:\n      description: a non-negative x-kubernetes-{i} value (see below)\n      type: string\n      enum: [a, b]\n"
        for i in range(20_000)
    )
    assert nesting.bound(crd_like, 10_000) < 40_000 + 20  # each `[` may hold a pair; hyphens in words cost nothing
    assert nesting.bound(crd_like.replace("[a, b]", "a"), 10_000) < 20
    deep_indent = "a:\n" + "".join(" " * 200 + f"k{i}: v\n" for i in range(20_000))
    assert nesting.bound(deep_indent, 10_000) < 2 * 201 + 1
    assert nesting.bound(" " * 20_000 + "a: b\n", 10_000) >= 10_000
    assert nesting.bound("a:\n" + " " * 12_000 + "b: c\n", 10_000) >= 10_000


def test_widest_indentation() -> None:
    for text, widest in [("a", 0), ("  a", 2), ("a:\n b:\n      c\n   d", 6), ("\n" + " " * 1000 + "x", 1000), ("", 0)]:
        assert nesting.widest_indentation(text, 10_000) == widest, text
