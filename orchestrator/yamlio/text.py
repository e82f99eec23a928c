"""Text operations that keep every byte the user wrote: split a file into documents, stamp and
strip the orchestration annotations as whole lines, and indent documents into ResourceList items.

Each function either edits lines it fully understands or returns None, so the caller can fall back
to the (slower, less faithful) round-trip editor."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TypeGuard

from yaml.nodes import MappingNode, Node, ScalarNode

_SEPARATOR = re.compile(r"^(?:---|\.\.\.)(?:[ \t]+(?:#.*)?)?$")


@dataclass(frozen=True)
class Segment:
    text: str
    start_line: int  # 0-based line of the segment in its file
    separator: bool


def is_separator(line: str) -> bool:
    """A `---` or `...` line (with an optional comment)."""
    return bool(_SEPARATOR.match(line.rstrip("\n")))


_SEPARATOR_LINE = re.compile(r"^(?:---|\.\.\.)(?:[ \t]+(?:#[^\n]*)?)?(?:\n|\Z)", re.M)


def split_documents(text: str) -> list[Segment]:
    """Cut a (newline-normalised) YAML stream into separator lines and document texts."""
    segments: list[Segment] = []
    position = line = 0
    for match in _SEPARATOR_LINE.finditer(text):
        if match.start() == match.end():
            continue  # an empty match at the very end
        if match.start() > position:
            segments.append(Segment(text[position : match.start()], line, False))
            line += text.count("\n", position, match.start())
        segments.append(Segment(match.group(), line, True))
        line += 1
        position = match.end()
    if position < len(text):
        segments.append(Segment(text[position:], line, False))
    return segments


def without_stray_ends(opening: str) -> str:
    """The text that opens a file without the `...` lines that end no document: a deleted first
    document leaves its `...` in the next one's prefix, and a stream cannot begin with one. Only
    the lines before the first document are looked at."""
    kept: list[str] = []
    lines = opening.splitlines(keepends=True)
    for number, line in enumerate(lines):
        stripped = line.strip()
        if stripped and not stripped.startswith("#") and not (line.startswith("...") and is_separator(line)):
            return "".join(kept) + "".join(lines[number:])  # a document opens (`---` or content)
        if not line.startswith("..."):
            kept.append(line)
    return "".join(kept)


def leading_blank_lines(text: str) -> int:
    """How many blank lines open a document: they belong to the separator before it, not to it."""
    count = 0
    for line in text.splitlines(keepends=True):
        if line.strip():
            break
        count += 1
    return count


def quote(value: str) -> str:
    """A YAML scalar for a value we stamp: single quotes (as kpt does), else double quotes with
    escapes for what cannot stand in them. Characters outside the BMP stay as they are (or YAML's long
    escapes): JSON's surrogate pairs are no YAML escape, so no YAML library could read them back."""
    if "\\" in value or not value.isprintable():
        return double_quoted(value)
    return "'" + value.replace("'", "''") + "'"


def double_quoted(value: str) -> str:
    """A YAML double-quoted scalar for any string."""
    out = json.dumps(value, ensure_ascii=False)
    if out.isprintable():
        return out
    return "".join(char if char.isprintable() else _escape(ord(char)) for char in out)


def _escape(code: int) -> str:
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def _key(node: MappingNode, name: str) -> tuple[ScalarNode, Node] | None:
    for key, value in node.value:
        if isinstance(key, ScalarNode) and key.value == name:
            return key, value
    return None


def _block_mapping(node: Node | None) -> TypeGuard[MappingNode]:
    return isinstance(node, MappingNode) and not node.flow_style and bool(node.value)


def _starts_line(lines: list[str], node: Node) -> bool:
    line = lines[node.start_mark.line]
    return line[: node.start_mark.column].strip() == ""


def _anchored(lines: list[str], node: Node) -> bool:
    """Whether the block mapping carries an anchor: lines inserted into it would reach every place
    an alias repeats it. Its start mark is at its properties (tag, anchor) wherever an alias of it
    stands, and a block mapping's content starts on a later line, so the rest of that line holds
    only them and perhaps a comment."""
    properties = lines[node.start_mark.line][node.start_mark.column :].split("#", 1)[0]
    return any(word.startswith("&") for word in properties.split())


def stamp(text: str, node: Node | None, entries: list[tuple[str, str]]) -> str | None:
    """Insert `key: value` annotation lines into a block-style document (rewriting in place those
    it already holds; with a `metadata:` of
    their own after its first key when it has none, as a `kind: List` does); None when its
    metadata or annotations are not plain block mappings (the caller falls back to round-trip
    editing)."""
    if not entries:
        return text
    if not _block_mapping(node) or node.start_mark.column != 0:
        return None  # an indented document would lose its indentation as a list item
    metadata = _key(node, "metadata")
    lines = text.splitlines(keepends=True)
    if metadata is None:  # a `kind: List`, say: the annotations come with a metadata of their own
        if len(node.value) < 2 or not _starts_line(lines, node.value[1][0]):
            return None
        at = node.value[1][0].start_mark.line
        lines[at:at] = ["metadata:\n", "  annotations:\n", *(f"    {k}: {v}\n" for k, v in entries)]
        return "".join(lines)
    meta_key, meta = metadata
    if not _block_mapping(meta):
        return None
    first_meta_key = meta.value[0][0]
    if not _starts_line(lines, first_meta_key) or _anchored(lines, meta):
        return None
    annotations = _key(meta, "annotations")
    if annotations is None:
        column = first_meta_key.start_mark.column
        step = max(column - meta_key.start_mark.column, 2)
        new = [" " * column + "annotations:\n"]
        new += [" " * (column + step) + f"{k}: {v}\n" for k, v in entries]
        at = first_meta_key.start_mark.line
    else:
        value = annotations[1]
        if not _block_mapping(value) or _anchored(lines, value):
            return None
        first = value.value[0][0]
        if not _starts_line(lines, first):
            return None
        missing = _replace_present(lines, value, entries)
        if missing is None:
            return None
        new = [" " * first.start_mark.column + f"{k}: {v}\n" for k, v in missing]
        at = first.start_mark.line
    lines[at:at] = new
    return "".join(lines)


def _replace_present(lines: list[str], annotations: MappingNode, entries: list[tuple[str, str]]) -> list[tuple[str, str]] | None:
    """Rewrite in place the lines of the entries the document already holds (a file written from
    `kpt fn source` output carries fnrun's own keys: kpt too replaces their values where they
    stand) and return the entries still to insert; None when such a key's entry is not a one-line
    block entry of its own (the caller falls back to round-trip editing)."""
    wanted = dict(entries)
    for key, value in annotations.value:
        if not (isinstance(key, ScalarNode) and key.value in wanted):
            continue
        line = key.start_mark.line
        if not isinstance(value, ScalarNode) or value.style in ("|", ">") or value.end_mark.line != line:
            return None
        if not _starts_line(lines, key):
            return None
        ending = "\r\n" if lines[line].endswith("\r\n") else "\n"
        lines[line] = " " * key.start_mark.column + f"{key.value}: {wanted.pop(key.value)}" + ending
    return [(k, v) for k, v in entries if k in wanted]


def strip_lines(lines: list[str], node: Node | None, keys: frozenset[str], line_offset: int = 0, note: str = "") -> list[int] | None:
    """The line numbers (relative to the document, which starts at `lines[line_offset]`) to delete
    to remove the annotations in `keys`; [] when none are present, None when they are not
    one-line block entries. A metadata they alone fill goes too, as `stamp` made it, unless it
    holds `note`, the annotation that says the document was read with a metadata of its own."""
    if not isinstance(node, MappingNode):
        return []
    metadata = _key(node, "metadata")
    if metadata is None or not isinstance(metadata[1], MappingNode):
        return []
    annotations = _key(metadata[1], "annotations")
    if annotations is None:
        return []
    ann_key, ann = annotations
    if not isinstance(ann, MappingNode):
        return []
    doomed: list[int] = []
    for key, value in ann.value:
        if not (isinstance(key, ScalarNode) and key.value in keys):
            continue
        if ann.flow_style or not isinstance(value, ScalarNode) or value.style in ("|", ">"):
            return None
        line = key.start_mark.line
        if value.end_mark.line != line or lines[line][: key.start_mark.column].strip():
            return None
        doomed.append(line - line_offset)
    if doomed and len(doomed) == len(ann.value):
        if ann_key.start_mark.line == ann.value[0][0].start_mark.line:
            return None
        doomed.append(ann_key.start_mark.line - line_offset)
        if len(metadata[1].value) == 1:  # metadata would be left empty: it goes too, as fnrun made it
            meta_key = metadata[0]
            if any(key.value == note for key, _ in ann.value) or not _starts_line(lines, meta_key) or _anchored(lines, metadata[1]):
                return None  # the note says how the document was as read: the round trip keeps that
            doomed.append(meta_key.start_mark.line - line_offset)
    return doomed


def delete_lines(text: str, doomed: list[int]) -> str:
    if not doomed:
        return text
    gone = set(doomed)
    return "".join(line for n, line in enumerate(text.splitlines(keepends=True)) if n not in gone)


_HEAD_RUN = re.compile(r"(?:[ \t]*(?:#[^\n]*)?\n)*(?:[ \t]*(?:#[^\n]*)?\Z)?")  # leading blank and comment lines
_INDENTED = re.compile(r"^[ \t]", re.M)
_LINE_START = re.compile(r"\n(?=[^\n])")  # where a non-empty line starts after another


class LineStart:
    """A pattern `^PATTERN` under re.M, found through the line breaks: Python's re tries `^` at
    every position of the text (~50 ms per pass over a function's 12 MB of output), while a
    literal `\\n` leading the pattern is skipped to at memchr speed."""

    def __init__(self, pattern: str) -> None:
        self._first = re.compile(pattern)
        self._rest = re.compile("\n(?=" + pattern + ")")  # a match may hold the next line's break
        self._prefixes = re.compile("\n(?:" + pattern + ")")

    def finditer(self, text: str, pos: int = 0, endpos: int | None = None) -> Iterator[int]:
        """The offsets of the lines in text[pos:endpos] that start with a match."""
        endpos = len(text) if endpos is None else endpos
        if (pos == 0 or text[pos - 1] == "\n") and self._first.match(text, pos, endpos):
            yield pos
        for match in self._rest.finditer(text, pos, endpos):
            yield match.start() + 1

    def search(self, text: str, pos: int = 0, endpos: int | None = None) -> int | None:
        return next(self.finditer(text, pos, endpos), None)

    def sub(self, replacement: str, text: str) -> str:
        """Each line's match replaced by `replacement` (no group references; for patterns that
        never match a line break)."""
        first = self._first.match(text)
        head = replacement + text[first.end() :] if first else text
        return self._prefixes.sub("\n" + replacement.replace("\\", "\\\\"), head)


def indent_item(text: str) -> str:
    """A document as a block sequence item of a ResourceList. Its head comments stand above the
    dash, unindented: ruamel-based functions drop a comment written after `- `, but keep these
    (unless one of them is indented: then the whole document goes below the dash)."""
    run = _HEAD_RUN.match(text)  # every part of it optional: it matches, if only the empty text
    head = run.end() if run is not None else 0
    if head == len(text) or _INDENTED.search(text, 0, head):
        head = 0
    out = text[:head] + "- " + _LINE_START.sub("\n  ", text[head:])
    return out if out.endswith("\n") else out + "\n"


def item_head(lines: list[str], dash_line: int, dash_column: int, floor: int) -> int:
    """The first line of an item's head comments: the comments (and blank lines between them)
    directly above its dash, no further right than the dash, and not above `floor`."""
    start = dash_line
    number = dash_line - 1
    while number >= floor:
        line = lines[number]
        stripped = line.strip()
        if stripped.startswith("#") and len(line) - len(line.lstrip(" ")) <= dash_column:
            start = number
        elif stripped:
            break
        number -= 1
    return start


def dedent_item(lines: list[str], dash_index: int, dash_column: int, content_column: int) -> str:
    """Undo `indent_item` for an item found at any indentation in some tool's ResourceList;
    `lines[dash_index]` holds the item's dash."""
    out = []
    for n, line in enumerate(lines):
        if n == dash_index:
            line = line[:dash_column] + " " + line[dash_column + 1 :]
        head = len(line) - len(line.lstrip(" "))
        out.append(line[min(head, content_column) :] if line.strip("\r\n") else line)
    return "".join(out)


_LINE = re.compile(r"[^\n]*\n|[^\n]+\Z")


def with_line_ends(content: str, original: str) -> str:
    """`content` (LF line ends) with each line ending as its counterpart in `original` (a file
    that mixes CRLF and LF): unchanged lines keep their own end, new lines take the end of the
    original line they replace or follow."""
    from .linematch import Matcher

    old = _LINE.findall(original)
    old_ends = ["\r\n" if line.endswith("\r\n") else "\n" for line in old]
    old_bare = [line.rstrip("\n").removesuffix("\r") for line in old]
    new = _LINE.findall(content)
    new_bare = [line.rstrip("\n") for line in new]
    out = []
    for _tag, i1, i2, j1, j2 in Matcher(old_bare, new_bare, autojunk=False).get_opcodes():
        for offset, j in enumerate(range(j1, j2)):
            if not new[j].endswith("\n"):
                out.append(new[j])
                continue
            at = min(i1 + offset, i2 - 1) if i2 > i1 else max(i1 - 1, 0)  # an insertion: the line before
            end = old_ends[min(at, len(old_ends) - 1)] if old_ends else "\n"
            out.append(new_bare[j] + end)
    return "".join(out)


def lf_lines(content: str) -> str:
    """The numbers (0-based, space-separated) of the lines of a CRLF file that end in a bare LF."""
    return " ".join(str(n) for n, line in enumerate(_LINE.findall(content)) if line.endswith("\n") and not line.endswith("\r\n"))


def with_ends_at(content: str, lf: set[int]) -> str:
    """`content` (LF line ends) with CRLF on every line but those numbered in `lf`."""
    return "".join(
        line if n in lf or not line.endswith("\n") else line[:-1] + "\r\n" for n, line in enumerate(_LINE.findall(content))
    )


#: Where str.splitlines cuts a line besides "\n" (so where a line of `comments.comments` ends).
OTHER_BREAKS = "\r\v\f\x1c\x1d\x1e\x85\u2028\u2029"
