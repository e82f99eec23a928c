"""Properties of merge2/merge3 on random resource-shaped data (nested maps, lists, scalars, and
associative lists of maps keyed by `name`).

The generators stay inside what the rules treat as data rather than instructions:
- no `null` in maps: a null is an instruction to clear the field, so `merge2(x, x)` would drop it;
- map keys never include the seed's associative keys other than the `name` the associative lists
  use: a random plain list of maps that all happened to carry `type` would be (correctly) merged by
  `type` and could repeat it, which is a conflict, not valid input.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings, strategies as st

from orchestrator.merge import merge2, merge3
from orchestrator.merge._common import same
from testing.sizing import examples

FAST = settings(max_examples=examples(200), deadline=None)

FIELDS = st.sampled_from(["a", "b", "c", "image", "spec", "containers", "env", "args"])
NAMES = st.sampled_from(["a", "b", "c", "d"]) | st.integers(0, 2)  # few names: lists overlap often
SCALARS = st.booleans() | st.integers(-3, 3) | st.floats(-2, 2, allow_nan=False) | st.text("xyz", max_size=3)


def values(leaves: st.SearchStrategy) -> st.SearchStrategy:
    def extend(children: st.SearchStrategy) -> st.SearchStrategy:
        maps = st.dictionaries(FIELDS, children, max_size=3)
        plain = st.lists(children, max_size=3)  # maps in here never carry `name`: a plain list
        keyed = st.lists(st.tuples(NAMES, maps), max_size=3, unique_by=lambda pair: (type(pair[0]), pair[0]))
        return maps | plain | keyed.map(lambda pairs: [{"name": name, **rest} for name, rest in pairs])

    return st.recursive(leaves, extend, max_leaves=12)


VALUES = values(SCALARS)
VALUES_WITH_NULLS = values(SCALARS | st.none())


def is_keyed(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(e, dict) and "name" in e for e in value)


def canonical(value: Any) -> Any:
    """Associative lists as sets: merges keep dest's element order, which need not be updated's."""
    if isinstance(value, dict):
        return {key: canonical(item) for key, item in value.items()}
    if isinstance(value, list):
        items = [canonical(item) for item in value]
        return sorted(items, key=lambda e: (type(e["name"]).__name__, e["name"])) if is_keyed(items) else items
    return value


@st.composite
def variant(draw: st.DrawFn, value: Any, side: str) -> Any:
    """A local or upstream edit of `value` that keeps each field's kind (a map stays a map, a list a
    list) and adds only names private to `side`: two edits of one original then never clash in a
    way the rules must report (both sides turning a field into different kinds of collection)."""
    if isinstance(value, dict):
        edited = {key: draw(variant(item, side)) for key, item in value.items() if draw(st.booleans())}
        added = draw(st.lists(st.sampled_from([f"{side}1", f"{side}2"]), unique=True, max_size=2))
        return {**edited, **{key: draw(VALUES) for key in added}}
    if is_keyed(value):
        kept = [e for e in value if draw(st.booleans())]
        edited = [{**draw(variant({k: v for k, v in e.items() if k != "name"}, side)), "name": e["name"]} for e in kept]
        added = [{"name": f"{side}{i}", **draw(st.dictionaries(FIELDS, VALUES, max_size=2))} for i in range(draw(st.integers(0, 2)))]
        return draw(st.permutations(edited + added))
    if isinstance(value, list):
        return value if draw(st.booleans()) else draw(st.lists(SCALARS, max_size=3))
    return value if draw(st.booleans()) else draw(SCALARS)


@FAST
@given(VALUES)
def test_merging_a_value_into_itself_changes_nothing(x: Any) -> None:
    assert merge2(x, x) == x


@FAST
@given(VALUES_WITH_NULLS, VALUES_WITH_NULLS)
def test_merging_the_same_source_twice_changes_nothing_more(src: Any, dest: Any) -> None:
    once = merge2(src, dest)
    assert merge2(src, once) == once


@FAST
@given(VALUES, VALUES)
def test_unchanged_upstream_keeps_dest(original: Any, dest: Any) -> None:
    assert merge3(original, original, dest) == dest


@FAST
@given(VALUES, VALUES)
def test_unchanged_dest_takes_upstream(original: Any, updated: Any) -> None:
    assert canonical(merge3(original, updated, original)) == canonical(updated)


@FAST
@given(st.data())
def test_merging_edits_of_one_original_never_raises(data: st.DataObject) -> None:
    original = data.draw(VALUES)
    updated, dest = data.draw(variant(original, "u")), data.draw(variant(original, "d"))
    merge3(original, updated, dest)


@FAST
@given(st.data())
def test_edits_upstream_left_alone_survive(data: st.DataObject) -> None:
    original = data.draw(st.dictionaries(FIELDS, VALUES, max_size=4))
    updated, dest = data.draw(variant(original, "u")), data.draw(variant(original, "d"))
    merged = merge3(original, updated, dest)
    for key in original.keys() & updated.keys() & dest.keys():
        if same(original[key], updated[key]):  # strictly: `1` to `true` is an upstream change
            assert merged[key] == dest[key]


@FAST
@given(VALUES_WITH_NULLS, VALUES_WITH_NULLS)
def test_two_way_merging_never_raises(src: Any, dest: Any) -> None:
    merge2(src, dest)
