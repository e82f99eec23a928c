"""Write a changed document back as minimal text edits on its original text.

The libyaml parse gives every node's position. The structural difference between the value that
went in and the one that came out (keys added or removed, scalars changed, list items added,
removed or changed) becomes replacements, insertions and deletions of exactly those spans; new
lines are indented like their siblings, a changed scalar keeps its quoting where its type allows,
and every other line keeps its bytes. What cannot be expressed safely (anchors and aliases,
merge keys, tags, block scalars, structural changes inside flow collections, moved list items, a
mapping or list left empty) raises `Unsupported`, and the caller uses the round-trip editor. Every
result is parsed again and must mean exactly the wanted value, unless it is, byte for byte, a text
the caller knows to mean it (a function's own, which a ruamel-based function mostly writes)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from yaml.nodes import CollectionNode, MappingNode, Node, ScalarNode, SequenceNode

from ..errors import FnrunError
from . import emit, fast
from .emit import Layout, Unsupported
from .roundtrip import detect_style, same

# A plain `<<` that ends its line or stands before a `:`: what can be a merge key (a `<<` inside
# text, such as a template's `<<.Series>>`, is not). Linear: the blanks after each `<<` once.
_MERGE_KEY = re.compile(r"<<[ \t]*(?::|$)", re.M)

@dataclass(frozen=True)
class KnownEdit:
    """An edit already worked out: `original` into the value whose repr is `wanted` gave `result`.
    A builtin step's hand-over works out its changed items' edits to learn whether they edit as
    text, and each item carries its own to the write-back, which asks for the same edit (each
    costs parsing the document twice). repr tells apart what `==` does not (1, 1.0, True, "1")."""

    original: str
    wanted: str
    result: str | None


def known_edit(original: str, new: Any, result: str | None) -> KnownEdit | None:
    """`result`, the edit of `original` into `new`, to hand on; None when `new` nests deeper than
    repr goes."""
    try:
        return KnownEdit(original, repr(new), result)
    except RecursionError:
        return None


def edit(original: str, new: Any, old: Any = None, known: str | None = None, done: KnownEdit | None = None) -> str | None:
    """`original` (one document, `\\n` line ends) changed into `new` as text edits; None when
    text edits cannot do it (the caller falls back to the round trip). `old`, the original's
    value when the caller has it, saves building it again; `known`, a text the caller knows to
    mean `new` (a function's own), saves parsing an edit that comes out the same to check it;
    `done`, this edit worked out before, is taken as it is when it is of the same text and value."""
    if done is not None and done.original == original:
        try:
            if done.wanted == repr(new):
                return done.result
        except RecursionError:
            pass
    return _edit(original, new, old, known)


def _edit(original: str, new: Any, old: Any, known: str | None = None) -> str | None:
    if "<<" in original and _MERGE_KEY.search(original):
        return None  # merge keys: the parse flattens them, so node positions no longer match keys
    try:
        if old is None:
            node, old = fast.parse(original, "original")
        else:
            node = fast.compose(original, "original")
    except FnrunError:
        return None
    if not isinstance(node, MappingNode) or not isinstance(old, dict):
        return None
    try:
        result = _Editor(original, node).run(old, new)
    except Unsupported:
        return None
    if result == known:
        return result
    try:
        loaded = fast.load(result, "edited")
        ok = loaded == new and same(loaded, new)
    except FnrunError:
        ok = False
    return result if ok else None


class _Editor:
    def __init__(self, text: str, root: MappingNode) -> None:
        self.text = text
        self.lines = text.splitlines(keepends=True)
        self.starts = [0]
        for line in self.lines:
            self.starts.append(self.starts[-1] + len(line))
        self.root = root
        self.edits: list[tuple[int, int, str]] = []  # (start offset, end offset, new text)
        self.shared = _shared_nodes(root) if "*" in text else frozenset()
        self._layout: Layout | None = None

    def run(self, old: dict, new: Any) -> str:
        self.diff(self.root, old, new, flow=False, step=None)
        # In text order, each span once (not the whole text copied per edit); of two insertions
        # at one place, the one made first comes first.
        order = sorted(range(len(self.edits)), key=lambda i: (self.edits[i][0], self.edits[i][1], i))
        parts: list[str] = []
        position = 0
        for i in order:
            start, end, replacement = self.edits[i]
            if start < position:
                raise Unsupported("edits that overlap")
            parts += (self.text[position:start], replacement)
            position = end
        parts.append(self.text[position:])
        return "".join(parts)

    # -- positions ------------------------------------------------------------------------

    def offset(self, line: int, column: int) -> int:
        return self.starts[line] + column

    def layout(self) -> Layout:
        if self._layout is None:
            style = detect_style(self.text)
            self._layout = Layout(step=style.mapping, offset=style.offset, dash=max(style.sequence - style.offset, 2))
        return self._layout

    def starts_line(self, mark: Any) -> bool:
        return not self.lines[mark.line][: mark.column].strip()

    def rest_is_blank(self, line: int, column: int) -> bool:
        """Whether only spaces or a comment follow `column` on `line`."""
        rest = self.lines[line][column:].strip()
        return not rest or rest.startswith("#")

    def last_line(self, node: Node) -> int:
        """The last line holding the node's own text (block collections end marks run on past
        trailing comments and blank lines; this does not)."""
        if isinstance(node, ScalarNode):
            if node.style in ("|", ">") and node.end_mark.column == 0:
                last = node.end_mark.line - 1
                while last > node.start_mark.line and not self.lines[last].strip():
                    last -= 1
                return last
            return node.end_mark.line
        if not isinstance(node, CollectionNode) or node.flow_style or not node.value:
            return node.end_mark.line
        if isinstance(node, MappingNode):
            key, value = node.value[-1]
            return max(key.end_mark.line, self.value_line(value))
        return self.value_line(node.value[-1])

    def value_line(self, node: Node) -> int:
        if isinstance(node, ScalarNode) and node.style is None and node.value == "":
            return node.start_mark.line  # an empty value: its mark is where the next token starts
        return self.last_line(node)

    # -- the structural diff ----------------------------------------------------------------

    def diff(self, node: Node, old: Any, new: Any, flow: bool, step: int | None) -> None:
        if old == new and same(old, new):  # `==` first: C-fast, and `same` implies it
            return
        if id(node) in self.shared:
            raise Unsupported("a node reached through an alias")
        if isinstance(node, ScalarNode) and not isinstance(new, (dict, list)) and not isinstance(old, (dict, list)):
            self.replace_scalar(node, new, flow)
        elif isinstance(node, MappingNode) and isinstance(new, dict) and isinstance(old, dict):
            self.diff_mapping(node, old, new, flow or bool(node.flow_style), step)
        elif isinstance(node, SequenceNode) and isinstance(new, list) and isinstance(old, list):
            self.diff_sequence(node, old, new, flow or bool(node.flow_style), step)
        else:
            raise Unsupported("a value changed type")

    def replace_scalar(self, node: ScalarNode, new: Any, flow: bool) -> None:
        if node.style in ("|", ">") or node.start_mark.line != node.end_mark.line:
            raise Unsupported("a block or multi-line scalar")
        start = self.offset(node.start_mark.line, node.start_mark.column)
        if self.text[start : start + 1] in ("&", "!"):
            raise Unsupported("an anchored or tagged scalar")
        if node.style is None and node.value == "":
            raise Unsupported("an empty value")
        end = self.offset(node.end_mark.line, node.end_mark.column)
        self.edits.append((start, end, emit.scalar(new, node.style, flow)))

    def diff_mapping(self, node: MappingNode, old: dict, new: dict, flow: bool, step: int | None) -> None:
        pairs = {}
        for key_node, value_node in node.value:
            key = key_node.value if key_node.tag == fast._STR else fast.load(self.key_text(key_node), "key")
            pairs[key] = (key_node, value_node)
        if pairs.keys() != old.keys():
            raise Unsupported("keys that do not match the value")
        kept = [k for k in new if k in old]
        if kept != [k for k in old if k in new]:
            raise Unsupported("keys moved")
        if flow and (len(kept) != len(old) or len(kept) != len(new)):
            raise Unsupported("keys added to or removed from a flow mapping")
        if not kept:
            raise Unsupported("every key replaced")
        column = node.value[0][0].start_mark.column
        child_step = step
        for key in old:
            key_node, value_node = pairs[key]
            if key not in new:
                self.delete_lines(key_node, value_node)
            else:
                self.diff_value(key_node, value_node, old[key], new[key], flow, child_step)
        previous: Any = None
        pending: list[tuple[Any, Any]] = []
        for key in new:
            if key in old:
                if pending:
                    self.insert_pairs(node, pairs.get(previous), pending, column, child_step)
                    pending = []
                previous = key
            else:
                pending.append((key, new[key]))
        if pending:
            self.insert_pairs(node, pairs.get(previous), pending, column, child_step)

    def key_text(self, key_node: Node) -> str:
        start = self.offset(key_node.start_mark.line, key_node.start_mark.column)
        return self.text[start : self.offset(key_node.end_mark.line, key_node.end_mark.column)]

    def diff_value(self, key_node: Node, value_node: Node, old: Any, new: Any, flow: bool, step: int | None) -> None:
        """A changed value under a block mapping key; its own step for what it nests."""
        nested = step
        if isinstance(value_node, MappingNode) and value_node.value and not value_node.flow_style:
            nested = max(value_node.value[0][0].start_mark.column - key_node.start_mark.column, 1)
        self.diff(value_node, old, new, flow, nested)

    def delete_lines(self, first: Node, node: Node) -> None:
        """Remove a mapping pair (from `first`, its key) or a sequence item as whole lines."""
        if not self.starts_line(first.start_mark):
            raise Unsupported("an entry that does not start its line")
        last = self.value_line(node)
        if not self.rest_is_blank(last, self.end_column(node, last)):
            raise Unsupported("an entry followed by more on its line")
        start = self.offset(first.start_mark.line, 0)
        self.edits.append((start, self.offset(last + 1, 0), ""))

    def insert_pairs(self, node: MappingNode, after: tuple[Node, Node] | None, pairs: list[tuple[Any, Any]], column: int, step: int | None) -> None:
        """New keys after the existing pair `after` (None: before the first key), at `column`;
        what they nest is indented by the mapping's own `step` (None: the document's)."""
        layout = self.layout()
        layout = Layout(step=step or layout.step, offset=layout.offset, dash=layout.dash)
        lines: list[str] = []
        for key, value in pairs:
            lines += emit.pair(key, value, column, layout)
        if after is None and not self.starts_line(node.value[0][0].start_mark):
            after = node.value[0]  # the first key shares a dash's line: the new keys go after it
        at = self.offset(node.value[0][0].start_mark.line, 0) if after is None else self.line_after(*after)
        self.edits.append((at, at, "".join(lines)))

    def line_after(self, key: Node, value: Node) -> int:
        last = max(key.end_mark.line, self.value_line(value))
        if not self.rest_is_blank(last, self.end_column(value, last)):
            raise Unsupported("more text after an entry on its line")
        if last + 1 >= len(self.lines) and not self.lines[last].endswith("\n"):
            raise Unsupported("no line end after the last entry")
        return self.offset(last + 1, 0)

    def end_column(self, node: Node, line: int) -> int:
        """Where the node's own text ends on `line`, its last line (for a block collection, where
        its last child's does)."""
        if isinstance(node, ScalarNode):
            if node.style is None and node.value == "":
                return node.start_mark.column if node.start_mark.line == line else len(self.lines[line])
            if node.style in ("|", ">"):
                return len(self.lines[line])
            return node.end_mark.column
        if not isinstance(node, CollectionNode) or node.flow_style or not node.value:
            return node.end_mark.column
        last = node.value[-1][1] if isinstance(node, MappingNode) else node.value[-1]
        return self.end_column(last, line)

    def diff_sequence(self, node: SequenceNode, old: list, new: list, flow: bool, step: int | None) -> None:
        if len(old) != len(node.value):
            raise Unsupported("items that do not match the value")
        child_step = step
        if len(old) == len(new):
            _refuse_moves(old, new)
            for item, before, after in zip(node.value, old, new):
                self.diff(item, before, after, flow, child_step)
            return
        common = 0
        while common < min(len(old), len(new)) and same(old[common], new[common]):
            common += 1
        tail = 0
        while tail < min(len(old), len(new)) - common and same(old[-1 - tail], new[-1 - tail]):
            tail += 1
        removed = list(range(common, len(old) - tail))
        added = new[common : len(new) - tail]
        if not new:
            raise Unsupported("a list left empty")
        changed = min(len(removed), len(added))  # items in between change in place, the rest go or come
        for index, after in zip(removed[:changed], added[:changed]):
            self.diff(node.value[index], old[index], after, flow, child_step)
        removed, added, common = removed[changed:], added[changed:], common + changed
        if flow:
            self.flow_append(node, common, added, removed, len(old))
            return
        for index in removed:
            item = node.value[index]
            self.delete_lines(_dash(self, node, item), item)
        if added:
            self.insert_items(node, common, added)

    def flow_append(self, node: SequenceNode, position: int, added: list, removed: list, length: int) -> None:
        if removed or position != length or not node.value:
            raise Unsupported("a flow list changed other than at its end")
        last = node.value[-1]
        if not isinstance(last, ScalarNode) or last.style in ("|", ">"):
            raise Unsupported("a flow list ending in a collection")
        if any(isinstance(value, (dict, list)) for value in added):
            raise Unsupported("a collection added to a flow list")
        at = self.offset(last.end_mark.line, last.end_mark.column)
        self.edits.append((at, at, "".join(", " + emit.scalar(value, None, flow=True) for value in added)))

    def insert_items(self, node: SequenceNode, position: int, added: list) -> None:
        """New items at `position`, dashes and content in the columns of the existing ones."""
        sample = node.value[min(position, len(node.value) - 1)]
        dash_mark = _dash(self, node, sample).start_mark
        column = dash_mark.column
        width = sample.start_mark.column - column if sample.start_mark.line == dash_mark.line else self.layout().dash
        if width < 2:
            raise Unsupported("an item on the line after its dash")
        layout = self.layout()
        lines: list[str] = []
        for item in added:
            lines += emit.item_lines(item, column, width, layout)
        if position < len(node.value):
            at = self.offset(_dash(self, node, node.value[position]).start_mark.line, 0)
        else:
            item = node.value[position - 1]
            last = self.value_line(item)
            if isinstance(item, ScalarNode) and not self.rest_is_blank(last, item.end_mark.column):
                raise Unsupported("more text after an item on its line")
            if last + 1 >= len(self.lines) and not self.lines[last].endswith("\n"):
                raise Unsupported("no line end after the last item")
            at = self.offset(last + 1, 0)
        self.edits.append((at, at, "".join(lines)))


class _DashMark:
    def __init__(self, line: int, column: int) -> None:
        self.line = line
        self.column = column


class _Dash:
    """The dash of a block sequence item, as a node-like thing with a start mark."""

    def __init__(self, line: int, column: int) -> None:
        self.start_mark = _DashMark(line, column)


def _dash(editor: _Editor, seq: SequenceNode, item: Node) -> Any:
    column = seq.start_mark.column
    for number in range(item.start_mark.line, -1, -1):
        line = editor.lines[number]
        if line[column : column + 1] == "-" and not line[:column].strip():
            return _Dash(number, column)
    raise Unsupported("no dash found for a list item")


def _refuse_moves(old: list, new: list) -> None:
    """Items that changed place would be rewritten in place, each taking the other's comments."""
    differing = [i for i in range(len(old)) if not same(old[i], new[i])]
    for i in differing:
        if any(same(new[i], old[j]) for j in differing if j != i):
            raise Unsupported("list items moved")


def _shared_nodes(root: Node) -> frozenset[int]:
    """Nodes that appear more than once: an anchored node and its aliases. A change at or below
    one of them would show in every place, so it is left to the round trip."""
    seen: set[int] = set()
    shared: set[int] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            shared.add(id(node))
            continue
        seen.add(id(node))
        if isinstance(node, MappingNode):
            for key, value in node.value:
                stack += (key, value)
        elif isinstance(node, SequenceNode):
            stack += node.value
    return frozenset(shared)
