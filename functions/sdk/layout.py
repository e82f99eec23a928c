"""The text layout of a function's input, so its output keeps it.

ruamel writes a whole document with one indentation style and keeps full-line comments at the
columns it read them at. A ResourceList wraps resources of many files and styles, and the
orchestrator puts their head comments above each item's dash. So each item of a block `items:` list
is cut out as a document of its own, parsed and written back with its own style, and indented into
the list at the columns it came at: an item the function left alone comes back as it went out.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

_KEY_LINE = re.compile(r"^([ -]*)[^\s#-][^:]*:\s*(?:#.*)?$")  # a key opening a block
_ITEM_LINE = re.compile(r"^( *)- ")
_CONTENT_LINE = re.compile(r"^( *)[^\s#]")
_ITEMS_KEY = re.compile(r"^items:[ \t]*(?:#.*)?$")
_DOCUMENT_MARK = re.compile(r"^(?:---|\.\.\.)(?:\s|$)")
EMPTY_ITEMS = "items: []"


@dataclass(frozen=True)
class Style:
    """Block indentation: spaces per mapping level, and the dash's offset inside a list's parent."""

    mapping: int = 2
    offset: int = 0


def guess_style(text: str) -> Style:
    """The majority style of the block collections in `text`; (2, 0) when it shows none."""
    mapping: Counter[int] = Counter()
    offset: Counter[int] = Counter()
    lines = [line for line in text.splitlines() if _CONTENT_LINE.match(line)]
    for line, nxt in zip(lines, lines[1:]):
        key = _KEY_LINE.match(line)
        if key is None:
            continue
        col = len(key.group(1))
        item = _ITEM_LINE.match(nxt)
        if item is not None:
            offset[len(item.group(1)) - col] += 1
        elif (deeper := len(nxt) - len(nxt.lstrip(" ")) - col) > 0:  # nxt is a content line: its indent
            mapping[deeper] += 1
    return Style(mapping.most_common(1)[0][0] if mapping else 2,
                 max(0, offset.most_common(1)[0][0]) if offset else 0)


@dataclass
class Split:
    """A list document cut apart: its own text with `items: []` in place of the items, each item as a
    document (head comments first), and the columns of the items' dashes and content."""

    root: str
    items: list[str]
    blank_lines: list[int]  # blank lines above each item (ruamel would drop them)
    dash: int = 0
    content: int = 2


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _is_dash(line: str) -> bool:
    rest = line.lstrip(" ")
    return rest.startswith("-") and rest[1:2] in (" ", "\n", "\r", "")


def _is_filler(line: str) -> bool:
    return not line.strip() or line.lstrip().startswith("#")


def split_items(text: str) -> Split | None:
    """Cut a single-document list with a block `items:` sequence apart; None for anything else
    (flow-style items, several documents), which is then read as one document."""
    lines = text.splitlines(keepends=True)
    if any(_DOCUMENT_MARK.match(line) for line in lines):
        return None
    key = next((i for i, line in enumerate(lines) if _ITEMS_KEY.match(line)), None)
    if key is None:
        return None
    dash, starts, end = None, [], key + 1
    for i in range(key + 1, len(lines)):
        line = lines[i]
        if _is_filler(line):
            continue
        if dash is None:
            if not _is_dash(line):
                return None
            dash = _indent(line)
        if _indent(line) < dash or (_indent(line) == dash and not _is_dash(line)):
            break
        if _indent(line) == dash:
            starts.append(i)
        end = i + 1
    if dash is None:
        return None
    heads = [_head_start(lines, start, dash, floor) for start, floor in zip(starts, [key + 1, *starts])]
    after_dash = lines[starts[0]][dash + 1:]
    content = (dash + 1 + len(after_dash) - len(after_dash.lstrip(" ")) if after_dash.strip()
               else _content_below(lines, starts[0]))
    blank_lines, firsts = [], []
    for head, start in zip(heads, starts):
        first = head
        while first < start and not lines[first].strip():
            first += 1
        blank_lines.append(first - head)
        firsts.append(first)
    items = [_dedent(lines[first:stop], start - first, dash, content)
             for first, start, stop in zip(firsts, starts, [*heads[1:], end])]
    root = "".join(lines[:key]) + EMPTY_ITEMS + "\n" + "".join(lines[end:])
    return Split(root, items, blank_lines, dash, content)


def _head_start(lines: list[str], dash_line: int, dash: int, floor: int) -> int:
    """The first of the comment and blank lines right above an item's dash, no further right than it."""
    start = dash_line
    while start > floor and _is_filler(lines[start - 1]) and (
            not lines[start - 1].strip() or _indent(lines[start - 1]) <= dash):
        start -= 1
    return start


def _content_below(lines: list[str], dash_line: int) -> int:
    return next((_indent(line) for line in lines[dash_line + 1:] if not _is_filler(line)), 2)


def _dedent(lines: list[str], dash_index: int, dash: int, content: int) -> str:
    out = []
    for n, line in enumerate(lines):
        if n == dash_index:
            line = line[:dash] + " " + line[dash + 1:]
        out.append(line[min(_indent(line), content):] if line.strip() else line)
    text = "".join(out)
    return text if text.endswith("\n") else text + "\n"


def as_item(document: str, dash: int, content: int) -> str:
    """A document written as a list item: head comments above the dash, content at `content`."""
    out, seen_content = [], False
    for line in document.splitlines(keepends=True):
        if not line.strip():
            out.append(line)
        elif not seen_content and line.lstrip().startswith("#"):
            out.append(" " * dash + line)
        elif not seen_content:
            seen_content = True
            out.append(" " * dash + "-" + " " * (content - dash - 1) + line)
        else:
            out.append(" " * content + line)
    return "".join(out)


def join_items(root: str, items: Iterable[str]) -> Iterator[str]:
    """Put the items back where `split_items` left `items: []`, in pieces as the items come."""
    items = iter(items)
    first = next(items, None)
    if first is None:
        yield root
        return
    lines = root.splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if line.rstrip() == EMPTY_ITEMS)
    yield "".join(lines[:at]) + "items:\n" + first
    yield from items
    yield "".join(lines[at + 1:])
