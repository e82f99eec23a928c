"""Write-back by minimal text edits (yamlio/textedit.py): what it edits as text, what it leaves to
the round trip, and a property test over random documents and random structural changes."""

from __future__ import annotations

import copy
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings, strategies as st

from orchestrator.yamlio import emit, fast, roundtrip, textedit
from orchestrator.yamlio.roundtrip import same
from testing.sizing import examples
from testing.yaml_fuzz import value_paths

DOC = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web  # the name
  namespace: 'team-a'
  labels:
    app: "web"
spec:
  replicas: 1
  # the pods
  template:
    spec:
      containers:
      - name: app
        image: nginx:1.0
        args: ["--port", "8080"]
        ports:
        - containerPort: 80
      - name: sidecar
        image: busybox
"""


def edited(text: str, change: Any) -> str | None:
    data = fast.load(text, "t")
    new = copy.deepcopy(data)
    change(new)
    result = textedit.edit(text, new)
    if result is not None:
        assert same(fast.load(result, "r"), new)
    return result


def test_changed_scalars_keep_their_quoting_and_comments() -> None:
    def change(d: dict) -> None:
        d["metadata"]["name"] = "api"
        d["metadata"]["namespace"] = "team-b"
        d["metadata"]["labels"]["app"] = "api"
        d["spec"]["replicas"] = 3

    out = edited(DOC, change)
    assert out == DOC.replace("name: web  #", "name: api  #").replace("'team-a'", "'team-b'").replace('"web"', '"api"').replace("replicas: 1", "replicas: 3")


def test_a_value_that_would_read_as_another_type_is_quoted() -> None:
    out = edited(DOC, lambda d: d["metadata"]["labels"].update(version="1.0", enabled="true", old="yes"))
    assert out is not None and "    version: '1.0'\n    enabled: 'true'\n    old: 'yes'\n" in out


def test_new_keys_and_items_are_indented_like_their_siblings() -> None:
    def change(d: dict) -> None:
        d["metadata"]["annotations"] = {"owner": "me"}
        d["spec"]["template"]["spec"]["containers"].append({"name": "log", "args": ["a", "b"]})
        d["spec"]["template"]["spec"]["containers"][0]["ports"].append({"containerPort": 443})

    out = edited(DOC, change)
    assert out is not None
    assert "    app: \"web\"\n  annotations:\n    owner: me\nspec:" in out
    assert "        - containerPort: 80\n        - containerPort: 443\n      - name: sidecar\n        image: busybox\n      - name: log\n        args:\n        - a\n        - b\n" in out


def test_deleted_keys_and_items_take_their_lines_only() -> None:
    def change(d: dict) -> None:
        del d["metadata"]["namespace"]
        del d["spec"]["template"]["spec"]["containers"][1]

    out = edited(DOC, change)
    assert out == DOC.replace("  namespace: 'team-a'\n", "").replace("      - name: sidecar\n        image: busybox\n", "")


def test_appended_flow_list_item_keeps_the_flow_style() -> None:
    out = edited(DOC, lambda d: d["spec"]["template"]["spec"]["containers"][0]["args"].append("--debug"))
    assert out == DOC.replace('"8080"]', '"8080", --debug]')


@pytest.mark.parametrize(
    "text, change",
    [
        ("apiVersion: v1\nkind: A\nbase: &b {x: 1}\nother: *b\n", lambda d: d["other"].update(x=2)),
        ("apiVersion: v1\nkind: A\nm:\n  <<: {x: 1}\n  y: 2\n", lambda d: d["m"].update(y=3)),
        ("apiVersion: v1\nkind: A\nl:\n- a\n- b\n", lambda d: d["l"].reverse()),
        ("apiVersion: v1\nkind: A\nm: {x: 1}\n", lambda d: d["m"].update(y=2)),
        ("apiVersion: v1\nkind: A\nm:\n  x: 1\n", lambda d: d["m"].pop("x")),
        ("apiVersion: v1\nkind: A\ns: |\n  one\n", lambda d: d.update(s="two\n")),
        ("apiVersion: v1\nkind: A\nt: !!str 5\n", lambda d: d.update(t="6")),
        ("apiVersion: v1\nkind: A\nm: 1\n", lambda d: d.update(m={"x": 1})),
    ],
    ids=["alias", "merge-key", "moved-items", "flow-mapping-key", "emptied-mapping", "block-scalar", "tag", "type-change"],
)
def test_what_text_edits_cannot_express_is_left_to_the_round_trip(text: str, change: Any) -> None:
    assert edited(text, change) is None


# ---------------------------------------------------------------- property test

KEYS = st.sampled_from(["a", "b", "name", "image", "spec", "x-y", "on", "1"])
STRINGS = st.text(st.sampled_from("ab :#'\"-y1.{,"), max_size=6)
SCALARS = st.none() | st.booleans() | st.integers(-5, 5) | st.floats(-2, 2, allow_nan=False) | STRINGS


def _values() -> st.SearchStrategy:
    def extend(children: st.SearchStrategy) -> st.SearchStrategy:
        return st.dictionaries(KEYS, children, min_size=1, max_size=3) | st.lists(children, min_size=1, max_size=3)

    return st.recursive(SCALARS, extend, max_leaves=10)


@st.composite
def documents(draw: st.DrawFn) -> tuple[str, dict]:
    """A resource rendered with random, uneven layout: every mapping its own indentation step,
    sequences indented or not, random quoting, end-of-line comments, trailing spaces."""
    data = {"apiVersion": "v1", "kind": "Thing", **draw(st.dictionaries(KEYS, _values(), max_size=4))}
    lines: list[str] = []

    def scalar(value: Any) -> str:
        style = draw(st.sampled_from([None, "'", '"']))
        return emit.scalar(value, style)

    def tail() -> str:
        return draw(st.sampled_from(["", "", "  # note", "   "]))

    def mapping(value: dict, column: int, first_prefix: str | None = None) -> None:
        for position, (key, child) in enumerate(value.items()):
            pad = first_prefix if position == 0 and first_prefix is not None else " " * column
            head = pad + emit.scalar(key) + ":"
            if isinstance(child, dict) and child:
                lines.append(head + tail())
                mapping(child, column + draw(st.integers(1, 5)))
            elif isinstance(child, list) and child:
                lines.append(head + tail())
                sequence(child, column + draw(st.sampled_from([0, 2, 3])))
            else:
                lines.append(head + " " + (emit.inline(child) if isinstance(child, (dict, list)) else scalar(child)) + tail())

    def sequence(value: list, column: int) -> None:
        for item in value:
            if isinstance(item, dict) and item:
                mapping(item, column + 2, " " * column + "- ")
            elif isinstance(item, list) and item:
                lines.append(" " * column + "-")
                sequence(item, column + 2)
            else:
                lines.append(" " * column + "- " + (emit.inline(item) if isinstance(item, (dict, list)) else scalar(item)) + tail())

    mapping(data, 0)
    return "\n".join(lines) + "\n", data


@st.composite
def changes(draw: st.DrawFn, data: dict) -> tuple[dict, list[tuple]]:
    """Random structural changes: scalars set, keys added and removed, items appended and removed.
    Returns the new value and the paths whose lines may change."""
    new = copy.deepcopy(data)
    touched: list[tuple] = []
    for _ in range(draw(st.integers(1, 3))):
        paths = [p for p, _ in value_paths(new) if len(p) > 1 or (p and p[0] not in ("apiVersion", "kind"))]
        if not paths:
            break
        path = draw(st.sampled_from(paths))
        holder = new
        for step in path[:-1]:
            holder = holder[step]
        target = holder[path[-1]]
        op = draw(st.sampled_from(["set", "delete", "add"]))
        if op == "set" and not isinstance(target, (dict, list)):
            holder[path[-1]] = draw(SCALARS)
            touched.append(path)
        elif op == "delete":
            if isinstance(holder, list):  # equal items are interchangeable: any of them may go
                # After earlier changes to this list's items, the item that went may equal another
                # one of the original list: which one the editor removes is then ambiguous too.
                prefix = path[:-1]
                earlier = any(len(p) > len(prefix) and p[: len(prefix)] == prefix for p in touched)
                touched += [(*prefix, i) for i, item in enumerate(holder) if earlier or same(item, target)]
            del holder[path[-1]]
            touched.append(path)
            break  # later paths would shift
        elif isinstance(target, dict):
            target[draw(KEYS)] = draw(_values())
            touched.append(path)
        elif isinstance(target, list):
            target.append(draw(_values()))
            touched.append(path)
    return new, touched


def _node_at(node: yaml.Node, path: tuple) -> yaml.Node:
    for step in path:
        if isinstance(node, yaml.MappingNode):
            node = next(v for k, v in node.value if fast.load(k.value, "k") == step or k.value == step)
        else:
            node = node.value[step]
    return node


def _touched_lines(text: str, paths: list[tuple]) -> set[int]:
    """Lines of the original that a change at `paths` may rewrite: the changed node's own lines
    and the line of its key (a deleted or retyped entry takes its key with it)."""
    root = yaml.compose(text, Loader=fast.StrictLoader)
    source = text.splitlines()
    lines: set[int] = set()
    for path in paths:
        try:
            node = _node_at(root, path)
            parent = _node_at(root, path[:-1])
        except (StopIteration, IndexError, KeyError):
            continue
        first = node.start_mark.line
        if isinstance(parent, yaml.MappingNode):
            first = min(first, next(k.start_mark.line for k, v in parent.value if v is node))
        else:  # a list item: from its dash
            column = parent.start_mark.column
            while first > 0 and not (source[first][column : column + 1] == "-" and not source[first][:column].strip()):
                first -= 1
        lines.update(range(first, node.end_mark.line + 1))
    return lines


def _subsequence(part: list[str], whole: list[str]) -> bool:
    rest = iter(whole)
    return all(any(line == other for other in rest) for line in part)


_HEALTH = [HealthCheck.too_slow, HealthCheck.data_too_large]


@settings(max_examples=examples(300), deadline=None, suppress_health_check=_HEALTH)
@given(st.data())
def test_random_changes_mean_exactly_the_new_value_and_keep_untouched_lines(data: st.DataObject) -> None:
    """A text edit means the new value and keeps every line the change did not touch; where text
    edits refuse, the write-back's fallback (the round trip over the original) still means it."""
    text, value = data.draw(documents())
    assert same(fast.load(text, "generated"), value)
    new, paths = data.draw(changes(value))
    result = textedit.edit(text, new)
    if result is None:
        assert same(fast.load(roundtrip.edit(text, None, new), "round trip"), new)
        return
    assert same(fast.load(result, "edited"), new)
    touched = _touched_lines(text, paths)
    kept = [line for number, line in enumerate(text.splitlines(keepends=True)) if number not in touched]
    assert _subsequence(kept, result.splitlines(keepends=True))


def test_most_random_changes_are_text_edits() -> None:
    """The property test above proves little if the fallback takes most changes: over a fixed
    sample of the same documents and changes, most are written as text edits."""
    seen = {"text": 0, "fallback": 0}

    @settings(max_examples=100, deadline=None, derandomize=True, database=None, suppress_health_check=_HEALTH)
    @given(st.data())
    def tally(data: st.DataObject) -> None:
        text, value = data.draw(documents())
        new, _ = data.draw(changes(value))
        seen["fallback" if textedit.edit(text, new) is None else "text"] += 1

    tally()
    assert seen["text"] > seen["fallback"] and sum(seen.values()) == 100


def test_an_edit_that_comes_out_as_a_text_known_to_mean_the_value_is_not_parsed_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """A ruamel-based function mostly writes what the text edits write: that text, known to mean
    the new value, saves parsing the edit to check it. Any other known text changes nothing."""
    parsed: list[str] = []
    load = fast.load
    monkeypatch.setattr(fast, "load", lambda text, source, *rest: parsed.append(source) or load(text, source, *rest))
    old = load(DOC, "t")
    new = copy.deepcopy(old)
    new["spec"]["replicas"] = 3
    want = DOC.replace("replicas: 1", "replicas: 3")
    assert textedit.edit(DOC, new, old, known=want) == want and parsed == []
    assert textedit.edit(DOC, new, old, known=want.replace("# the pods", "# other")) == want and parsed == ["edited"]
    new["spec"]["replicas"] = 4  # a known text that does not mean the value is never the edit
    assert textedit.edit(DOC, new, old, known=want) == DOC.replace("replicas: 1", "replicas: 4")


def test_an_edit_worked_out_before_is_taken_while_text_and_value_are_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    """A builtin step's items carry the edits it worked out; the write-back takes one without
    parsing anything when it asks for the same text into the same value, and works it out anew
    for any other (a value equal but of other types: 1 and 1.0, True and 1)."""
    old = fast.load(DOC, "t")
    new = copy.deepcopy(old)
    new["spec"]["replicas"] = 3
    done = textedit.known_edit(DOC, new, DOC.replace("replicas: 1", "replicas: 3"))
    parsed: list[str] = []
    parse = fast.parse
    monkeypatch.setattr(fast, "parse", lambda text, source, *rest: parsed.append(source) or parse(text, source, *rest))
    assert textedit.edit(DOC, new, done=done) == DOC.replace("replicas: 1", "replicas: 3") and parsed == []
    as_float = copy.deepcopy(new)
    as_float["spec"]["replicas"] = 3.0
    assert textedit.edit(DOC, as_float, done=done) == DOC.replace("replicas: 1", "replicas: 3.0") and parsed.count("original") == 1
    assert textedit.edit(DOC.replace("# the pods", "# other"), new, done=done) is not None and parsed.count("original") == 2
