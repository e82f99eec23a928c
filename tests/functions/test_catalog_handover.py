"""The catalog functions' side of the hand-over (functions/kpt_catalog/handover.py): a function that
reads comments runs over ruamel's reading of an item's text, and what it changed is carried onto
the item as fnrun read it, so the fields it did not touch keep fnrun's reading."""

from __future__ import annotations

import copy

from hypothesis import given, strategies as st

from functions.kpt_catalog.handover import carried, same

scalars = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.floats(-2, 2, allow_nan=False), st.sampled_from(["", "a", "1", "true"]))
values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.sampled_from("abcd"), inner, max_size=3)), max_leaves=12)


def test_same_tells_types_apart() -> None:
    assert not same(1, True) and not same(1, 1.0) and not same({"a": 0}, {"a": False})
    assert same({"a": [1, "x"]}, {"a": [1, "x"]})


@given(before=values, after=values)
def test_what_the_function_left_is_what_goes_on(before: object, after: object) -> None:
    """Where fnrun and the function read the item alike, the item goes on as the function left it."""
    assert same(carried(copy.deepcopy(before), before, after), after)


@given(data=st.dictionaries(st.sampled_from("abcd"), values, min_size=1), new=scalars)
def test_fields_it_did_not_touch_keep_fnruns_reading(data: dict, new: object) -> None:
    """A field the function changed takes its new value; every other keeps fnrun's reading, even
    where the function read it otherwise (a date, an octal number: here, a string)."""
    key = sorted(data)[0]
    before = {k: ("read otherwise" if k != key else v) for k, v in data.items()}
    after = {**before, key: new}
    result = carried(data, before, after)
    assert same(result[key], new) if not same(data[key], new) else same(result[key], data[key])
    assert all(same(result[k], data[k]) for k in data if k != key)
