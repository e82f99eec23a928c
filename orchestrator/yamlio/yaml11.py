"""Plain scalars that a YAML 1.1 reader takes for something else. fnrun reads YAML 1.2 (as kpt and
kyaml do): `on`, `no`, `y` are strings and `=` is just `=`. PyYAML, which many functions use,
reads the first three as booleans and refuses `=` (1.1's "value" type) outright, so one such value
anywhere in a package fails the function or turns a string into a boolean. What a function is
given has them quoted: the same value in both readings. Files keep their bytes: write-back
compares what comes back by value."""

from __future__ import annotations

import re

from yaml.nodes import Node

from ..errors import FnrunError
from . import blanks, fast

_WORDS = ("=", "y", "Y", "yes", "Yes", "YES", "n", "N", "no", "No", "NO", "on", "On", "ON", "off", "Off", "OFF")
_AMBIGUOUS = frozenset(_WORDS)
# A word standing alone where a plain scalar can: after `: ` or `- `, after a flow indicator, or
# as a key at a line's start; before `:`, a comment, a flow indicator or the line's end. Three
# searches, each led by a character class (fast to skip to) with possessive repeats (linear).
_WORD = "(?:" + "|".join(sorted(_WORDS, key=len, reverse=True)) + ")"
_END = r"(?=[ \t]*+(?:$|[:#,\]}]))"
_CANDIDATES = (
    re.compile(r"[:-][ \t]++" + _WORD + _END, re.M),
    re.compile(r"[\[{,][ \t]*+" + _WORD + _END, re.M),
    re.compile(r"\n[ \t]*+" + _WORD + r"[ \t]*+:"),
)
_FIRST_KEY = re.compile(r"[ \t]*+" + _WORD + r"[ \t]*+:")


def quoted(document: str) -> str:
    """The document with every plain scalar in `_AMBIGUOUS` single-quoted (the document itself when
    it has none, or when it does not parse: it reaches the function as it is)."""
    if not (_FIRST_KEY.match(document) or any(candidate.search(document) for candidate in _CANDIDATES)):
        return document
    try:
        root = fast.compose(document, "item")
    except FnrunError:
        return document
    marks = sorted(_plain_ambiguous(root), reverse=True)
    if not marks:
        return document
    lines = document.splitlines(keepends=True)
    for line, column, value in marks:
        text = lines[line]
        if text[column : column + len(value)] != value:
            return document
        lines[line] = f"{text[:column]}'{value}'{text[column + len(value):]}"
    return "".join(lines)


def _plain_ambiguous(root: Node | None) -> set[tuple[int, int, str]]:
    return {
        (node.start_mark.line, node.start_mark.column, node.value)
        for node in blanks.scalars(root)
        if not node.style and node.value in _AMBIGUOUS and node.tag == "tag:yaml.org,2002:str"
    }
