"""`roundtrip.render` gives text that means the value, whatever comments the edited text held:
ruamel, writing a comment it hung above a collection's first entry before the `[]` or `{}` that
collection became, broke the entries after it (`port: -` then the dash's item on a line of its
own), which then read as the next function's bad output."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings, strategies as st

from orchestrator.yamlio import fast, roundtrip
from testing.pipeline_helpers import fnrun, write_package

KEYS = ("app", "tier", "zone", "port", "mode")
SCALARS = st.one_of(st.integers(0, 9), st.sampled_from(("a", "b c", "yes-no", "x")))


def _values(depth: int = 0) -> st.SearchStrategy[Any]:
    if depth >= 2:
        return SCALARS
    inner = _values(depth + 1)
    return st.one_of(
        SCALARS,
        st.lists(inner, min_size=1, max_size=3),
        st.dictionaries(st.sampled_from(KEYS), inner, min_size=1, max_size=3),
    )


@st.composite
def _written(draw: st.DrawFn, value: Any, indent: int) -> list[str]:
    """Block lines for a non-empty mapping or sequence, with comments and blank lines above entries
    (at the entry's column or its parent's), and after keys."""
    lines: list[str] = []
    pad = " " * indent
    entries = list(value.items()) if isinstance(value, dict) else [(None, item) for item in value]
    for key, child in entries:
        if draw(st.booleans()):
            lines += ["\n"] * draw(st.integers(0, 1)) + [" " * draw(st.sampled_from((indent, max(indent - 2, 0)))) + "# c\n"]
        head = pad + (f"{key}:" if key is not None else "-")
        if isinstance(child, (dict, list)) and child:
            lines.append(head + (" # k" if draw(st.booleans()) else "") + "\n")
            step = 2 if isinstance(child, dict) or key is None or draw(st.booleans()) else 0  # compact or indented dashes
            lines += draw(_written(child, indent + step))
        else:
            lines.append(f"{head} {fast.dump(child).strip()}\n" if not isinstance(child, (dict, list)) else f"{head} {'{}' if isinstance(child, dict) else '[]'}\n")
    return lines


_EDITS = st.one_of(st.builds(list), st.builds(dict), st.one_of(SCALARS, st.lists(SCALARS, min_size=1, max_size=2)))  # mostly emptied


def _at(value: Any, path: tuple) -> Any:
    for key in path:
        value = value[key]
    return value


def _paths(value: Any, path: tuple = ()) -> list[tuple]:
    out = [path] if path else []
    children = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else []
    for key, child in children:
        out += _paths(child, (*path, key))
    return out


@settings(max_examples=400, deadline=None)
@given(st.dictionaries(st.sampled_from(KEYS), _values(), min_size=1, max_size=3), st.data())
def test_render_means_the_value(spec, data):
    text = "spec:\n" + "".join(data.draw(_written(spec, 2)))
    value = {"spec": copy.deepcopy(spec)}
    assert fast.load(text, "generated") == value  # the generator writes what it means
    paths = [path for path in _paths(value) if _at(value, path) not in ([], {}) and isinstance(_at(value, path), (dict, list))] or _paths(value)
    for path in data.draw(st.lists(st.sampled_from(paths), max_size=3)):
        parent = value
        try:
            for key in path[:-1]:
                parent = parent[key]
            parent[path[-1]] = data.draw(_EDITS)
        except (KeyError, IndexError, TypeError):
            continue  # an earlier edit replaced the path's parent
    out = roundtrip.render(text, value)
    assert roundtrip.same(fast.load(out, "rendered"), value), out


def test_the_reported_case() -> None:
    text = "spec:\n  tier:\n\n  # c\n  - a\n  port:\n  - 1\n"
    value = {"spec": {"tier": [], "port": [1]}}
    assert roundtrip.same(fast.load(roundtrip.render(text, value), "rendered"), value)


LOCAL = {"annotations": {"config.kubernetes.io/local-config": "true"}}
PIPELINE = {
    "apiVersion": "kpt.dev/v1", "kind": "Kptfile", "metadata": {"name": "example", **LOCAL},
    "pipeline": {"mutators": [{"image": "gcr.io/kpt-fn/starlark:v0.4.3", "configPath": "fn-config.yaml"}, {"image": "fnrun-test/identity:v1"}]},
}
EMPTY_TIER = {
    "apiVersion": "fn.kpt.dev/v1alpha1", "kind": "StarlarkRun", "metadata": {"name": "empty-tier", **LOCAL},
    "source": 'for r in ctx.resource_list["items"]:\n  if r["kind"] == "App":\n    r["spec"]["tier"] = []\n',
}


@pytest.mark.engine
def test_a_later_function_is_not_blamed(tmp_path: Path, test_images: None) -> None:
    """The in-process starlark empties the list; the container after it gets the item's text as
    `render` made it, and used to be blamed for returning the broken YAML it was sent."""
    root = write_package(tmp_path / "pkg", {
        "Kptfile": fast.dump(PIPELINE),
        "fn-config.yaml": fast.dump(EMPTY_TIER),
        "app.yaml": "apiVersion: example.com/v1\nkind: App\nmetadata:\n  name: app\nspec:\n  tier:\n\n  # c\n  - a\n  port:\n  - 1\n",
    })
    result = fnrun("render", str(root), env={"FNRUN_BUILTIN_CATALOG": "1"})
    assert result.code == 0, result.stderr
    assert fast.load((root / "app.yaml").read_text(), "app") == {
        "apiVersion": "example.com/v1", "kind": "App", "metadata": {"name": "app"}, "spec": {"tier": [], "port": [1]}}
