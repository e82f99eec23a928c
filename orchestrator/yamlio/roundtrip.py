"""Editing a changed document so that only the lines that changed differ.

ruamel's round trip keeps comments and quoting but normalises some formatting. So instead of
writing its output, we dump the original (R0) and the edited tree (R1) the same way and apply the
difference R0→R1 to the original text with a three-way line merge: lines ruamel would merely
reformat, but that did not change, keep the user's bytes."""

from __future__ import annotations

import io
import marshal
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import FnrunError, InputError
from . import blanks, fast
from .comments import comments
from .diff3 import merge_lines

if TYPE_CHECKING:
    from ruamel.yaml import YAML

# ruamel is imported inside the functions that edit: most runs (and every `fnrun wrap` call inside
# a function image) change no document and never pay its ~20 ms import.


@dataclass(frozen=True)
class Style:
    """A file's block indentation, as ruamel's `indent(mapping, sequence, offset)` wants it."""

    mapping: int = 2
    sequence: int = 2
    offset: int = 0


_KEY_LINE = re.compile(r"^( *)(?:- +)?[^\s#-][^#]*:\s*(?:#.*)?$")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _dash_width(body: str) -> int:
    """Columns from a sequence dash to the item's content (`-   a` → 4); 2 for a lone dash."""
    rest = body[1:]
    return 1 + len(rest) - len(rest.lstrip(" ")) if rest.strip() else 2


def detect_style(text: str) -> Style:
    """Guess the mapping indentation, and the dash offset and content indentation of block
    sequences, from the first nested mapping and the first nested list under a key."""
    mapping = offset = sequence = None
    lines = [line for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    for current, following in zip(lines, lines[1:]):
        if not _KEY_LINE.match(current) or current.rstrip().endswith(("|", ">", "|-", ">-", "|+", ">+")):
            continue
        base = _indent(current)
        body = current.lstrip(" ")
        while body.startswith("- "):
            width = _dash_width(body)
            base += width
            body = body[width:]
        inner, child = _indent(following), following.lstrip(" ")
        if child == "-" or child.startswith("- "):
            if offset is None and inner >= base:
                offset = inner - base
                sequence = offset + _dash_width(child)
        elif mapping is None and inner > base:
            mapping = inner - base
        if mapping is not None and offset is not None:
            break
    mapping = mapping or 2
    if offset is None:
        offset, sequence = (0, 2) if mapping == 2 else (mapping - 2, mapping)
    return Style(mapping=mapping, sequence=max(sequence or 2, offset + 2), offset=offset)


def _yaml(style: Style) -> YAML:
    from ruamel.yaml import YAML
    yaml = YAML(typ="rt")
    yaml.preserve_quotes = True
    yaml.width = 4096
    yaml.indent(mapping=style.mapping, sequence=max(style.sequence, style.offset + 2), offset=style.offset)
    return yaml


def load(text: str) -> Any:
    """A round-trip tree whose anchors are all kept on dump, even where no alias uses them any more
    (ruamel drops those; the user wrote them). A line ending in a tab, which ruamel refuses, is
    read without its trailing blanks (the line merges keep the user's bytes where nothing changed)."""
    tree = _yaml(Style()).load(blanks.parseable(text))
    _keep_anchors(tree, set())
    return tree


def _keep_anchors(node: Any, seen: set[int]) -> None:
    from ruamel.yaml.comments import CommentedMap, CommentedSeq
    if not isinstance(node, (CommentedMap, CommentedSeq)) or id(node) in seen:
        return
    seen.add(id(node))
    if node.anchor.value:
        node.yaml_set_anchor(node.anchor.value, always_dump=True)
    for child in node.values() if isinstance(node, CommentedMap) else node:
        _keep_anchors(child, seen)


def dump(tree: Any, style: Style) -> str:
    out = io.StringIO()
    _yaml(style).dump(tree, out)
    return fast.without_end_marker(out.getvalue())


#: kyaml's `wide` sequence style: dashes two columns in from their key, content four.
WIDE = Style(mapping=2, sequence=4, offset=2)


def reindent(text: str, style: Style) -> str:
    """text dumped again in another block style (comments kept); text itself when the round trip
    would not mean the same, or fnrun cannot read its meaning (a duplicate key, an application tag)."""
    try:
        meaning = fast.load(text, "reindent")
    except InputError:
        return text
    out = dump(load(text), style)
    return out if means(out, meaning) else text


def same(a: Any, b: Any) -> bool:
    """Equality that tells `true` from `1` and `"1"` from `1`, across plain and ruamel types.

    Write-back asks this of every changed resource, twice; the walk in Python is most of that, so
    the two C-speed answers come first: values that are not equal are not the same, and plain
    values whose marshal bytes match (the bytes name every type) are."""
    if a != b:
        return False
    try:
        if marshal.dumps(a, 0) == marshal.dumps(b, 0):  # version 0: no sharing or interning marks
            return True
    except ValueError:  # ruamel's types (subclasses) are not marshallable: walk them
        pass
    return _same(a, b)


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(v, b[k]) for k, v in a.items())
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, (dict, list)) or isinstance(b, (dict, list)):
        return False
    if _boolean(a) or _boolean(b):
        return _boolean(a) and _boolean(b) and bool(a) == bool(b)
    if isinstance(a, str) != isinstance(b, str):
        return False
    return a == b


def _boolean(value: Any) -> bool:
    """A bool, or ruamel's anchored one (ScalarBoolean, an int that keeps its anchor): by name, so
    that telling them apart does not import ruamel."""
    return isinstance(value, bool) or type(value).__name__ == "ScalarBoolean"


def _to_tree(data: Any) -> Any:
    from ruamel.yaml.comments import CommentedMap, CommentedSeq
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
    every part that already matches; returns the node to use (a new one where the type changed).

    A node reached through an alias is edited in place when every place it appears wants the same
    value. Where the places now differ, the node is edited in place to what its first place (the
    anchor) wants, the places that want that too stay aliases, and the others get a copy of their
    own: an edit under `*alias` does not leak into `&anchor`, nor one at `&anchor` into `*alias`."""
    wanted: dict[int, list[Any]] = {}
    if shared := _shared(tree):
        _collect(tree, data, shared, wanted, set())
    divergent = {node: [values[0], False] for node, values in wanted.items() if not all(same(values[0], v) for v in values[1:])}
    return _sync(tree, data, divergent)


def _children(tree: Any, data: Any) -> list[tuple[Any, Any]]:
    from ruamel.yaml.comments import CommentedMap, CommentedSeq
    if isinstance(tree, CommentedMap) and isinstance(data, dict):
        return [(tree[k], data[k]) for k in tree if k in data]
    if isinstance(tree, CommentedSeq) and isinstance(data, list):
        return list(zip(tree, data))
    return []


def _count_nodes(tree: Any, counts: dict[int, int]) -> None:
    from ruamel.yaml.comments import CommentedMap, CommentedSeq
    if not isinstance(tree, (CommentedMap, CommentedSeq)):
        return
    counts[id(tree)] = counts.get(id(tree), 0) + 1
    if counts[id(tree)] == 1:
        for child in tree.values() if isinstance(tree, CommentedMap) else tree:
            _count_nodes(child, counts)


def _collect(tree: Any, data: Any, shared: set[int], wanted: dict[int, list[Any]], path: set[int]) -> None:
    """For every shared node, the values `data` holds at each place the node appears."""
    if id(tree) in path:
        return
    path.add(id(tree))
    for child, value in _children(tree, data):
        if id(child) in shared:
            wanted.setdefault(id(child), []).append(value)
        _collect(child, value, shared, wanted, path)
    path.discard(id(tree))


def _sync(tree: Any, data: Any, divergent: dict[int, list[Any]]) -> Any:
    from ruamel.yaml.comments import CommentedMap, CommentedSeq
    if id(tree) in divergent:  # a node several places share, which no longer all want one value
        anchor = divergent[id(tree)]  # [what its first place wants, whether it was edited to that]
        if not same(anchor[0], data):
            return _to_tree(data)
        if anchor[1]:
            return tree
        anchor[1] = True
    if isinstance(tree, (CommentedMap, CommentedSeq)) and isinstance(data, (dict, list)) and not data and tree:
        return _to_tree(data)  # emptied: the comments ruamel hung on it went with its entries
    if isinstance(tree, CommentedMap) and isinstance(data, dict):
        for key in [k for k in tree if k not in data]:
            del tree[key]
        for key, value in data.items():
            if key not in tree:
                tree[key] = _to_tree(value)
            elif id(tree[key]) in divergent or not same(tree[key], value):
                replacement = _sync(tree[key], value, divergent)
                if replacement is not tree[key]:
                    tree[key] = replacement
                    _drop_lead_comment(tree, key)
        return tree
    if isinstance(tree, CommentedSeq) and isinstance(data, list):
        for index, value in enumerate(data[: len(tree)]):
            if id(tree[index]) in divergent or not same(tree[index], value):
                tree[index] = _sync(tree[index], value, divergent)
        del tree[len(data) :]
        tree.extend(_to_tree(v) for v in data[len(tree) :])
        return tree
    return _to_tree(data)


def _drop_lead_comment(tree: Any, key: Any) -> None:
    """Drop the comment ruamel holds between `key:` and its block value (above the first entry)
    when the value is now an empty collection: the comment went with the entries, and ruamel,
    writing it before the `[]` or `{}` on a line of its own, breaks the entries that follow."""
    value, slots = tree[key], tree.ca.items.get(key)
    if isinstance(value, (dict, list)) and not value and slots and len(slots) > 3:
        slots[3] = None


def adopt_styles(new: Any, base: Any) -> None:
    """Where a value did not change, reuse the original's node: its quotes, scalar style and flow style."""
    from ruamel.yaml.comments import CommentedMap, CommentedSeq
    pairs: list[tuple[Any, Any]]
    container: CommentedMap | CommentedSeq
    if isinstance(new, CommentedMap) and isinstance(base, CommentedMap):
        pairs = [(k, k) for k in new if k in base]
        container = new
    elif isinstance(new, CommentedSeq) and isinstance(base, CommentedSeq):
        pairs = [(i, i) for i in range(min(len(new), len(base)))]
        container = new
    else:
        return
    if base.fa.flow_style() and not new.fa.flow_style() and not _has_comments(new):
        new.fa.set_flow_style()  # a comment cannot live inside a flow collection
    for key, base_key in pairs:
        mine, theirs = container[key], base[base_key]
        if isinstance(mine, (CommentedMap, CommentedSeq)):
            adopt_styles(mine, theirs)
        elif same(mine, theirs) and type(mine) is not type(theirs):
            container[key] = theirs


def _has_comments(node: Any) -> bool:
    from ruamel.yaml.comments import CommentedMap, CommentedSeq
    if isinstance(node, (CommentedMap, CommentedSeq)):
        if node.ca.comment or any(node.ca.items.values()):
            return True
        return any(_has_comments(v) for v in (node.values() if isinstance(node, CommentedMap) else node))
    return False


def edit(original: str, new_text: str | None, data: Any) -> str:
    """The original document's text changed into `data`, touching only the lines that differ.

    `new_text` is the document as a function returned it (its comments win), or None when the
    value was edited through the API (the original's comments and layout are the base). Each
    merge is checked by parsing it and counting its comments: if a finer merge does not yield
    `data`, or holds a comment more often than the text it takes comments from, a coarser one is
    used, and ruamel's own dump of the edited tree as the last resort. Where the original has
    aliases, they are the user's layout as much as its comments: the original is the base, and
    `sync` keeps each alias whose places still agree, whatever the function wrote."""
    style = detect_style(original)
    lines = original.splitlines(keepends=True)
    try:
        for candidate, keep in _commented_merges(original, lines, new_text, data, style):
            if means(candidate, data) and not Counter(comments(candidate)) - keep:
                return candidate
    except Exception:  # noqa: BLE001 - ruamel's own faults (its emitter fails on some comments of aliased nodes)
        pass
    return _plain_merge(original, lines, data, style)


def _commented_merges(original: str, lines: list[str], new_text: str | None, data: Any, style: Style) -> Iterator[tuple[str, Counter[str]]]:
    """The original merged with ruamel's comment-keeping edit, finely then coarsely, then that
    edit's own dump, each with the comments it may hold (as often as the text they come from):
    each to be checked, as ruamel can move a comment where it ends a value, or write one twice."""
    base_tree = load(original)
    r0 = dump(base_tree, style)
    if new_text is not None and (comments(new_text) or not comments(original)) and not _shared(base_tree):
        tree = load(new_text)
        tree = sync(tree, data)
        adopt_styles(tree, load(original))
        keep = comments(new_text)
    else:
        tree = sync(load(original), data)
        keep = comments(original)
    r1 = dump(tree, style)
    base, new = r0.splitlines(keepends=True), r1.splitlines(keepends=True)
    wanted = Counter(keep)
    for fine in (True, False):
        yield "".join(merge_lines(lines, base, new, keep, fine)), wanted
    yield r1, wanted


def _plain_merge(original: str, lines: list[str], data: Any, style: Style) -> str:
    """The edit without ruamel's comments: the original's value and `data` dumped plainly, their
    difference applied to the original (its comments stand where nothing changed); a plain dump of
    `data` where even that does not mean it."""
    new = dump(_to_tree(data), style)
    try:
        base = dump(_to_tree(fast.load(original, "original")), style)
    except FnrunError:
        return new
    for fine in (True, False):
        merged = "".join(merge_lines(lines, base.splitlines(keepends=True), new.splitlines(keepends=True), comments(original), fine))
        if means(merged, data):
            return merged
    return new


def _shared(tree: Any) -> set[int]:
    """The nodes of the tree (by id) that appear in more than one place: anchors with aliases."""
    counts: dict[int, int] = {}
    _count_nodes(tree, counts)
    return {node for node, count in counts.items() if count > 1}


def means(text: str, data: Any) -> bool:
    """Whether `text`, alone, is valid YAML whose value is `data`."""
    return _read_as(text, data) is not None


def _read_as(text: str, data: Any) -> tuple[Any, Any] | None:
    """`text` parsed (node and value), where alone it is valid YAML whose value is `data`; else None."""
    try:
        parsed = fast.parse(text, "merge")
    except FnrunError:
        return None
    return parsed if same(parsed[1], data) else None


def render(text: str | None, data: Any) -> str:
    """`rendered`'s text, for a caller that does not parse it."""
    return rendered(text, data)[0]


def rendered(text: str | None, data: Any) -> tuple[str, tuple[Any, Any] | None]:
    """Text for a resource that has no original: its own text when it agrees with `data`, else
    that text edited to `data`, checked: where ruamel's dump of the edit (its comments placed its
    way) does not mean `data`, a fresh dump of `data` in the text's style, which does. With the
    edit, the check's parse (node, value) for a caller that would parse the text next; else None."""
    if text is None:
        return dump(_to_tree(data), Style()), None
    style = detect_style(text)
    tree = load(text)
    if same(tree, data):
        return text, None
    try:
        out = dump(sync(tree, data), style)
    except Exception:  # noqa: BLE001 - ruamel's emitter fails on some comments: the fresh dump below
        return dump(_to_tree(data), style), None
    parsed = _read_as(out, data)
    return (out, parsed) if parsed is not None else (dump(_to_tree(data), style), None)
