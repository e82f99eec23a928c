"""The comments of a document, found without parsing it: what the write-back compares to tell a
function that changed only comments from one that changed data, and which comments a merge of
lines must keep.

Every scan is linear in the text (possessive patterns, `str.find`), since it runs over every
document a run writes."""

from __future__ import annotations

import re
from collections.abc import Iterator

from .text import OTHER_BREAKS

# What a comment scan passes over, by which kinds of quoted scalar can still close on the line:
# plain text, a blank not before a `#`, whole single- and double-quoted scalars. Possessive
# quantifiers throughout: nothing is ever given back, so a match is one pass over what it covers.
# The scan stops before a blank and `#` (a comment) or at a quote that never closes.
_PLAIN = r"[ \t](?!#)"
_SINGLE = r"'[^']*+'"
_DOUBLE = r'"(?:[^"\\]++|\\.)*+"'
_SKIP = {
    (True, True): re.compile(rf"""(?:[^'" \t]++|{_PLAIN}|{_SINGLE}|{_DOUBLE})*+"""),
    (True, False): re.compile(rf"(?:[^' \t]++|{_PLAIN}|{_SINGLE})*+"),
    (False, True): re.compile(rf'(?:[^" \t]++|{_PLAIN}|{_DOUBLE})*+'),
    (False, False): re.compile(rf"(?:[^ \t]++|{_PLAIN})*+"),
}


def comment_start(line: str) -> int | None:
    """Where the comment of a line that does not start with one begins (just after its `#`), or
    None: the first `#` after a space or tab, outside single- and double-quoted scalars (a quote
    that never closes on the line quotes nothing).

    Linear: a single quote that does not close is the line's last, and when a double quote does
    not close no later one does (the backslash pairs after it are the same ones), so after each
    such quote the scan goes on taking that kind of quote as plain text."""
    single = double = True
    position = 0
    while True:
        skipped = _SKIP[single, double].match(line, position)  # it matches, if only the empty text
        position = skipped.end() if skipped is not None else position
        if position == len(line):
            return None
        mark = line[position]
        if mark in " \t":
            return position + 2
        if mark == "'":
            single = False
        else:
            double = False
        position += 1


def comments(text: str) -> list[str]:
    """The comments of a document, in order: enough to tell whether a function changed only
    comments. Where few lines hold a `#`, only those are looked at, found by `str.find`: a
    document of megabytes without comments costs a scan, not a string per line."""
    found: list[str] = []
    lines = text.splitlines() if 4 * text.count("#") > text.count("\n") else _lines_with_hash(text)
    for line in lines:
        comment = _line_comment(line) if "#" in line else None
        if comment is not None:
            found.append(comment)
    return found


def _lines_with_hash(text: str) -> Iterator[str]:
    """The lines of str.splitlines that hold a `#` (and maybe others cut at the same "\n")."""
    position = text.find("#")
    while position >= 0:
        start = text.rfind("\n", 0, position) + 1
        end = text.find("\n", position)
        end = len(text) if end < 0 else end
        chunk = text[start:end]
        yield from chunk.splitlines() if any(b in chunk for b in OTHER_BREAKS) else (chunk,)
        position = text.find("#", end)


def _line_comment(line: str) -> str | None:
    stripped = line.lstrip()
    if stripped.startswith("#"):
        return stripped[1:].strip()
    start = comment_start(line)
    return None if start is None else line[start:].strip()


def same_comments(a: str, b: str) -> bool:
    """Whether two documents hold the same comments: the line scan first, and where it sees a
    difference, the YAML scanner's answer (a quoted scalar over several lines, as a function's
    YAML library may fold a long one, makes the line scan take its text for comments)."""
    return comments(a) == comments(b) or scanned_comments(a) == scanned_comments(b)


def scanned_comments(text: str) -> list[str]:
    """The comments of a document as libyaml's scanner sees them: what stands after a `#` in the
    text between its tokens, and after a block scalar's header. One pass; the line scan when the
    text does not scan."""
    import yaml

    lines = text.split("\n")
    found: list[str] = []

    def between(line: int, column: int, end_line: int, end_column: int) -> None:
        for number in range(line, min(end_line, len(lines) - 1) + 1):
            part = lines[number][column if number == line else 0 : end_column if number == end_line else None]
            hash_at = part.find("#")
            if hash_at >= 0:
                found.append(part[hash_at + 1 :].strip())

    line = column = 0
    try:
        for token in yaml.scan(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
            start, end = token.start_mark, token.end_mark
            if (start.line, start.column) > (line, column):
                between(line, column, start.line, start.column)
            if getattr(token, "style", None) in ("|", ">"):
                header = lines[start.line][start.column :]
                if "#" in header:
                    found.append(header[header.index("#") + 1 :].strip())
            if (end.line, end.column) > (line, column):
                line, column = end.line, end.column
    except yaml.YAMLError:
        return comments(text)
    between(line, column, len(lines) - 1, len(lines[-1]))
    return found
