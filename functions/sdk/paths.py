"""Field paths such as `spec.template.spec.containers[name=web].resources.limits.cpu`.

One grammar serves both directions: functions use it to read and edit items, and results carry it in
`field.path`, so a path in a result can be fed back to `Resource.get`.
  key           a mapping key (letters, digits, `-`, `_`, `/`)
  ['a.b/c']     a key that contains dots or brackets
  [3]           a sequence index
  [name=web]    the first sequence element (a mapping) whose `name` is `web`
"""

from __future__ import annotations

import re
import sys
from collections.abc import Sequence
from typing import Any

Segment = str | int | tuple[str, str]
PathLike = str | Sequence[Segment]

_TOKEN = re.compile(r"""\[(?:(\d+)|'([^']*)'|"([^"]*)"|([^=\]]+)=([^\]]*))\]|([^.\[\]]+)|(\.)""")
_PLAIN_KEY = re.compile(r"^[A-Za-z0-9_/-]+$")


def parse(path: PathLike) -> list[Segment]:
    """Split a path string into segments; a sequence of segments is taken as already split."""
    if not isinstance(path, str):
        return list(path)
    segments: list[Segment] = []
    pos = 0
    while pos < len(path):
        match = _TOKEN.match(path, pos)
        if match is None:
            raise ValueError(f"bad field path {path!r} at column {pos}")
        index, single, double, sel_key, sel_value, key, _dot = match.groups()
        if index is not None:
            segments.append(int(index))
        elif single is not None or double is not None:
            segments.append(single if single is not None else double)
        elif sel_key is not None:
            segments.append((sel_key, sel_value))
        elif key is not None:
            segments.append(key)
        pos = match.end()
    return segments


def render(segments: Sequence[Segment]) -> str:
    """Render segments in the grammar above."""
    out = ""
    for seg in segments:
        if isinstance(seg, int):
            out += f"[{seg}]"
        elif isinstance(seg, tuple):
            out += f"[{seg[0]}={seg[1]}]"
        elif _PLAIN_KEY.match(seg):
            out += f".{seg}" if out else seg
        else:
            out += f"['{seg}']"
    return out


def _same(old: Any, new: Any) -> bool:
    """Equal and of the same kind: `true` is not `1` in YAML although it is in Python."""
    return old == new and isinstance(old, bool) == isinstance(new, bool)


def _add(node: dict, key: str, value: Any) -> Any:
    """Add a new key; a new `metadata` goes before `spec`, where Kubernetes objects keep it."""
    if key == "metadata" and "spec" in node:
        at = list(node).index("spec")
        if hasattr(node, "insert"):  # a round-trip node: its comments stay with their keys
            node.insert(at, key, value)
        else:
            rest = [(k, node.pop(k)) for k in list(node)[at:]]
            node[key] = value
            node.update(rest)
    else:
        node[key] = value
    return value


def _new_mapping() -> dict:
    """A mapping for a missing field: a round-trip node wherever ruamel read the text, so it is
    written like the others; a plain dict for data handed over parsed (runner.transport), where
    ruamel is never imported."""
    comments = sys.modules.get("ruamel.yaml.comments")
    return comments.CommentedMap() if comments is not None else {}


def _step(node: Any, seg: Segment) -> Any:
    """One step down, or None when the step leads nowhere."""
    if isinstance(seg, str):
        return node.get(seg) if isinstance(node, dict) else None
    if not isinstance(node, list):
        return None
    if isinstance(seg, int):
        return node[seg] if -len(node) <= seg < len(node) else None
    key, value = seg
    return next((el for el in node if isinstance(el, dict) and str(el.get(key)) == value), None)


def lookup(root: Any, path: PathLike, default: Any = None) -> Any:
    node = root
    for seg in parse(path):
        node = _step(node, seg)
        if node is None:
            return default
    return node


def assign(root: Any, path: PathLike, value: Any) -> bool:
    """Set the field, creating missing mappings on the way; return whether anything changed.

    An equal value is left in place so its quoting style and comments survive (idempotent edits)."""
    segments = parse(path)
    if not segments:
        raise ValueError("empty field path")
    node = root
    for i, seg in enumerate(segments[:-1]):
        child = _step(node, seg)
        if child is None:
            if not (isinstance(seg, str) and isinstance(node, dict)):
                raise KeyError(f"{render(segments[: i + 1])} does not exist")
            child = _add(node, seg, _new_mapping())
        node = _own(root, node, seg, child)
    last = segments[-1]
    if isinstance(last, str) and isinstance(node, dict):
        if last in node and _same(node[last], value):
            return False
        if last in node:
            node[last] = value
        else:
            _add(node, last, value)
        return True
    if isinstance(last, int) and isinstance(node, list) and -len(node) <= last < len(node):
        if _same(node[last], value):
            return False
        node[last] = value
        return True
    raise KeyError(f"cannot set {render(segments)}")


def remove(root: Any, path: PathLike) -> bool:
    """Remove the field if present; return whether it was there."""
    segments = parse(path)
    parent = root
    for seg in segments[:-1]:
        child = _step(parent, seg)
        if child is None:
            return False
        parent = _own(root, parent, seg, child)
    last = segments[-1]
    if isinstance(last, str) and isinstance(parent, dict) and last in parent:
        del parent[last]
        return True
    return False


def _own(root: Any, parent: Any, seg: Segment, child: Any) -> Any:
    """`child`, which is about to change, made this place's own when a YAML alias repeats it
    elsewhere in `root` (ruamel reads `*alias` as the anchored node itself): an edit never reaches
    a place the function did not touch. The anchor's place keeps the node (its comments are
    there); the other places are aliases and hold no text of their own, so the place that
    changes, or every other place when it is the anchor's, gets an anchor-free copy."""
    anchor = getattr(child, "anchor", None)
    if anchor is None or not getattr(anchor, "value", None):
        return child
    places = _places(root, child)
    if len(places) < 2:
        return child
    here = next((p for p in places if p[0] is parent and p[1] == _key_of(parent, seg, child)), None)
    if here is None or here is places[0]:
        for holder, key in places[1:]:
            holder[key] = _bare_copy(child)
        return child
    copy = _bare_copy(child)
    parent[here[1]] = copy
    return copy


def _key_of(parent: Any, seg: Segment, child: Any) -> Any:
    """The key or index under which `parent` holds `child` (a `[name=x]` step names no index)."""
    if isinstance(parent, list):
        return next(i for i, el in enumerate(parent) if el is child)
    return seg


def _places(root: Any, node: Any) -> list[tuple[Any, Any]]:
    """Every (container, key) holding `node`, in document order (the first is the anchor's)."""
    places: list[tuple[Any, Any]] = []
    seen: set[int] = set()
    stack: list[tuple[Any, Any, Any]] = [(None, None, root)]
    while stack:
        holder, key, value = stack.pop()
        if value is node:
            places.append((holder, key))
        elif isinstance(value, (dict, list)) and id(value) not in seen:
            seen.add(id(value))
            pairs = list(value.items() if isinstance(value, dict) else enumerate(value))
            stack.extend((value, k, v) for k, v in reversed(pairs))
    return places


def _bare_copy(node: Any) -> Any:
    """A copy with no anchor or comments (flow style kept): how an alias's place is written out."""
    if isinstance(node, dict):
        fresh: Any = type(node)() if hasattr(node, "fa") else {}
        for key, value in node.items():
            fresh[key] = _bare_copy(value)
    elif isinstance(node, list):
        fresh = type(node)() if hasattr(node, "fa") else []
        fresh.extend(_bare_copy(value) for value in node)
    else:
        return node
    if hasattr(node, "fa") and node.fa.flow_style():
        fresh.fa.set_flow_style()
    return fresh
