"""Editing a changed document so that only the lines that changed differ.

ruamel's round trip keeps comments and quoting but normalises some formatting. So instead of
writing its output, we dump the original (R0) and the edited tree (R1) the same way and apply the
difference R0→R1 to the original text with a three-way line merge: lines ruamel would merely
reformat, but that did not change, keep the user's bytes."""

from __future__ import annotations

import io
import re
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq

from .text import comments


@dataclass(frozen=True)
class Style:
    """A file's block indentation, as ruamel's `indent(mapping, sequence, offset)` wants it."""

    mapping: int = 2
    sequence: int = 2
    offset: int = 0


_KEY_LINE = re.compile(r"^( *)(?:- +)?[^\s#-][^#]*:\s*(?:#.*)?$")


def detect_style(text: str) -> Style:
    """Guess mapping indentation and sequence style from the first nested mapping and list."""
    mapping = sequence_offset = None
    lines = [l for l in text.splitlines() if l.strip() and not l.lstrip().startswith("#")]
    for current, following in zip(lines, lines[1:]):
        match = _KEY_LINE.match(current)
        if not match or current.rstrip().endswith(("|", ">", "|-", ">-")):
            continue
        base = len(current) - len(current.lstrip(" "))
        if current.lstrip().startswith("- "):
            base += len(current.lstrip()) - len(current.lstrip()[1:].lstrip()) 
        inner = len(following) - len(following.lstrip(" "))
        if following.lstrip().startswith("- "):
            if sequence_offset is None and inner >= base:
                sequence_offset = inner - base
        elif mapping is None and inner > base:
            mapping = inner - base
        if mapping is not None and sequence_offset is not None:
            break
    mapping = mapping or 2
    offset = sequence_offset or 0
    return Style(mapping=mapping, sequence=offset + 2 if offset else 2 if mapping == 2 else mapping, offset=offset)


def _yaml(style: Style) -> YAML:
    yaml = YAML(typ="rt")
    yaml.preserve_quotes = True
    yaml.width = 4096
    yaml.indent(mapping=style.mapping, sequence=max(style.sequence, style.offset + 2), offset=style.offset)
    return yaml


def load(text: str) -> Any:
    return _yaml(Style()).load(text)


def dump(tree: Any, style: Style) -> str:
    out = io.StringIO()
    _yaml(style).dump(tree, out)
    return out.getvalue()


def same(a: Any, b: Any) -> bool:
    """Equality that tells `true` from `1` and `"1"` from `1`, across plain and ruamel types."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(v, b[k]) for k, v in a.items())
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, (dict, list)) or isinstance(b, (dict, list)):
        return False
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, str) != isinstance(b, str):
        return False
    return a == b


def _to_tree(data: Any) -> Any:
    if isinstance(data, dict):
        node = CommentedMap()
        for key, value in data.items():
            node[key] = _to_tree(value)
        return node
    if isinstance(data, list):
        return CommentedSeq(_to_tree(v) for v in data)
    return data


def sync(tree: Any, data: Any) -> Any:
    """Make `tree` equal `data` in place, keeping the nodes (and so the comments and styles) of
    every part that already matches; returns the node to use (a new one where the type changed)."""
    if isinstance(tree, CommentedMap) and isinstance(data, dict):
        for key in [k for k in tree if k not in data]:
            del tree[key]
        for key, value in data.items():
            if key not in tree:
                tree[key] = _to_tree(value)
            elif not same(tree[key], value):
                replacement = sync(tree[key], value)
                if replacement is not tree[key]:
                    tree[key] = replacement
        return tree
    if isinstance(tree, CommentedSeq) and isinstance(data, list):
        for index, value in enumerate(data[: len(tree)]):
            if not same(tree[index], value):
                tree[index] = sync(tree[index], value)
        del tree[len(data) :]
        tree.extend(_to_tree(v) for v in data[len(tree) :])
        return tree
    return _to_tree(data)


def adopt_styles(new: Any, base: Any) -> None:
    """Where a value did not change, reuse the original's node: its quotes, scalar style and flow style."""
    if isinstance(new, CommentedMap) and isinstance(base, CommentedMap):
        pairs = [(k, k) for k in new if k in base]
        container = new
    elif isinstance(new, CommentedSeq) and isinstance(base, CommentedSeq):
        pairs = [(i, i) for i in range(min(len(new), len(base)))]
        container = new
    else:
        return
    if base.fa.flow_style() and not new.fa.flow_style():
        new.fa.set_flow_style()
    for key, base_key in pairs:
        mine, theirs = container[key], base[base_key]
        if isinstance(mine, (CommentedMap, CommentedSeq)):
            adopt_styles(mine, theirs)
        elif same(mine, theirs) and type(mine) is not type(theirs):
            container[key] = theirs


def _sync_regions(base: list[str], a: list[str], b: list[str]) -> list[tuple[int, int, int, int, int, int]]:
    """Stretches where base, a and b agree (the classic diff3 sync regions)."""
    am = SequenceMatcher(None, base, a, autojunk=False).get_matching_blocks()
    bm = SequenceMatcher(None, base, b, autojunk=False).get_matching_blocks()
    regions = []
    ia = ib = 0
    while ia < len(am) and ib < len(bm):
        abase, amatch, alen = am[ia]
        bbase, bmatch, blen = bm[ib]
        lo, hi = max(abase, bbase), min(abase + alen, bbase + blen)
        if lo < hi:
            asub, bsub = amatch + lo - abase, bmatch + lo - bbase
            regions.append((lo, hi, asub, asub + hi - lo, bsub, bsub + hi - lo))
        if abase + alen < bbase + blen:
            ia += 1
        else:
            ib += 1
    regions.append((len(base), len(base), len(a), len(a), len(b), len(b)))
    return regions


def merge_lines(original: list[str], base: list[str], new: list[str]) -> list[str]:
    """Apply base→new to original (diff3). Where original and base also differ, new wins."""
    out: list[str] = []
    iz = ia = ib = 0
    for zmatch, zend, amatch, aend, bmatch, bend in _sync_regions(base, original, new):
        z, a, b = base[iz:zmatch], original[ia:amatch], new[ib:bmatch]
        if a == b or b == z:
            out += a
        else:
            out += b
        out += original[amatch:aend]
        iz, ia, ib = zend, aend, bend
    return out


def edit(original: str, new_text: str | None, data: Any) -> str:
    """The original document's text changed into `data`, touching only the lines that differ.

    `new_text` is the document as a function returned it (its comments win), or None when the
    value was edited through the API (the original's comments and layout are the base)."""
    style = detect_style(original)
    base_tree = load(original)
    r0 = dump(base_tree, style)
    if new_text is not None and (comments(new_text) or not comments(original)):
        tree = load(new_text)
        tree = sync(tree, data)
        adopt_styles(tree, load(original))
    else:
        tree = sync(load(original), data)
    r1 = dump(tree, style)
    merged = merge_lines(original.splitlines(keepends=True), r0.splitlines(keepends=True), r1.splitlines(keepends=True))
    return "".join(merged)


def render(text: str | None, data: Any) -> str:
    """Text for a resource that has no original: its own text when it agrees with `data`."""
    if text is None:
        tree = _to_tree(data)
        style = Style()
    else:
        style = detect_style(text)
        tree = load(text)
        if same(tree, data):
            return text
        tree = sync(tree, data)
    return dump(tree, style)
