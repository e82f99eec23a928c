"""A changed item that scope stamps anew (`_with_annotations`: a subpackage's step rebasing a
handed-over function's change) has its text parsed once. Rendering the value checks the edit by
parsing it (`roundtrip.rendered`); scope used to parse the same text again for the node and value
it stamps. The parse is counted around each call, and the outcome held to the old way's (render,
then parse), byte for byte, over the random documents and changes of tests/merge/test_render_once.py."""

from __future__ import annotations

import copy
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from typing import Any

import pytest
from hypothesis import event, given, strategies as st
from test_render_once import FAST, changed, outcome, read_items

from orchestrator import annotations as ann
from orchestrator.merge import scope
from orchestrator.read.package import read_file, stamped
from orchestrator.resource import Resource
from orchestrator.yamlio import fast

FIXES = (
    {ann.PATH: "f.yaml", ann.INTERNAL_PATH: "f.yaml"},
    {ann.PATH: "sub/f.yaml", ann.INTERNAL_PATH: "sub/f.yaml", ann.INDEX: "1", ann.INTERNAL_INDEX: "1"},
)


@contextmanager
def parses() -> Iterator[Counter[str]]:
    """How often each text is parsed (`fast.parse`, which `fast.load` calls too) inside the block."""
    counts: Counter[str] = Counter()
    real = fast.parse

    def counted(text: str, source: str, line_offset: int = 0) -> Any:
        counts[text] += 1
        return real(text, source, line_offset)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(fast, "parse", counted)
        yield counts


def old_way(fixes: dict[str, str], item: Resource) -> tuple[str, str | None, dict]:
    """What `_with_annotations` did: the value's text rendered, then parsed again."""
    body = item.value_text()
    node, data = fast.parse(body, "function output")
    return shown(stamped(body, node, data, scope._merged_entries(item.data, fixes)))


def new_way(fixes: dict[str, str], item: Resource) -> tuple[str, str | None, dict]:
    return shown(scope._with_annotations(item, fixes))


def shown(resource: Resource) -> tuple[str, str | None, dict]:
    return resource.text, resource.body, resource.data


@FAST
@given(st.data())
def test_a_changed_item_is_parsed_once(data: st.DataObject) -> None:
    for item in data.draw(read_items(), label="items"):
        new = data.draw(changed(item.data), label=f"value of {item!r}")
        fixes = data.draw(st.sampled_from(FIXES), label="fixes")
        old = outcome(partial(old_way, fixes), item.replaced(copy.deepcopy(new)))
        with parses() as counts:
            one = outcome(partial(new_way, fixes), item.replaced(new))
        assert old == one, (old, one)
        if one[0] == "error":
            event("both ways fail")
            continue
        event("unchanged value" if one[1][1] == item.body else "changed value")
        assert counts[one[1][1]] == 1, counts


def test_the_edit_is_parsed_once() -> None:
    """One concrete case through the edit path (ruamel's dump checked and kept): before, the
    rendered text was parsed twice, by the check and by scope."""
    text = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web # the name\ndata:\n  a: b # why\n"
    item = read_file("sub/f.yaml", text.encode())[1][0]
    value = copy.deepcopy(item.data)
    value["data"]["a"] = "c"
    with parses() as counts:
        moved = scope._with_annotations(item.replaced(value), FIXES[0])
    assert moved.body == text.replace("a: b", "a: c")
    assert counts == Counter({moved.body: 1}), counts
    assert moved.path == "f.yaml" and moved.data["data"] == {"a": "c"}
