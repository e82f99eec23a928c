"""Items that open on a lone dash, seen as ruamel writes them (yamlio/dashes.py): the view lines
up with ruamel's dump, means what the original means, and every item that comes through a merge
unchanged goes back to the user's lines."""

from __future__ import annotations

import pytest

from orchestrator.yamlio import dashes, diff3, fast, roundtrip

ITEMS = [
    "l:\n- \n  # c\n  k: v\n  j: w\n",
    "l:\n- # c\n  k: v\n",
    "l:\n-\n\n  # c\n  k: v\n",
    "l:\n- \n  # c\n  - x\n  - y\n",
    "l:\n-   # c\n    k: v\n    j: 1\n",
    "l:\n- # c\n  # d\n\n  k: v\n",
    "l:\n-\n  # c\n  |-\n    text\n    -\n      more\n",
    "m:\n  x: 1\nl:\n  - # c\n    k: v\n  - \n    # d\n    k: w\n",
]


@pytest.mark.parametrize("text", ITEMS)
def test_the_view_is_ruamels_dump_and_means_the_same(text: str) -> None:
    view = "".join(dashes.joined(text.splitlines(keepends=True)).lines)
    assert fast.load(view, "view") == fast.load(text, "original")
    if "text\n" not in text:  # ruamel re-indents a block scalar's text
        assert view == roundtrip.dump(roundtrip.load(text), roundtrip.detect_style(text))


@pytest.mark.parametrize("text", ITEMS)
def test_a_merge_that_changes_nothing_gives_the_users_lines_back(text: str) -> None:
    lines = text.splitlines(keepends=True)
    base = roundtrip.dump(roundtrip.load(text), roundtrip.detect_style(text)).splitlines(keepends=True)
    assert diff3.merge_lines(lines, base, base, ["c", "d"]) == lines


def test_a_dash_inside_a_block_scalars_text_is_text() -> None:
    lines = ["k: |\n", "  -\n", "    x\n", "j: >-\n", "  - \n", "   y\n"]
    assert dashes.joined(lines).lines == lines


def test_an_item_without_content_is_a_null_and_stays() -> None:
    lines = ["l:\n", "- # c\n", "- x\n", "-\n"]
    assert dashes.joined(lines).lines == lines
