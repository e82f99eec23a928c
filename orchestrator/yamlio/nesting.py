"""How deep a YAML text can nest, bounded from above at the speed of `str.count`, and counted
exactly (from parser events, without recursion) only where that bound is too high.

libyaml's composer recurses in C, so a document must be known not to nest past what it survives
before it is composed. Counting events costs as much as parsing again; the bound costs a few
scans of the text and is far below any limit for real documents, however long: every level of
nesting needs a mark the bound counts.

- A flow collection needs a `{`, or a `[`, which may hold a single-pair mapping too (`[a: b]`).
- A block collection that starts after `- ` or `? ` on the same line (`- - a`, `- a: b`, `? a`
  and its compact `: b: c` value) needs that `-` or `?` followed by a blank: one level each
  `-`, two each `?`.
- Any other block collection starts with the first token of its line, at a column deeper than
  every collection it is nested in, or is an indentless sequence at its mapping's column
  (`key:` then `- a`): at most two a column, for each column up to the widest indentation.

Lines broken by anything but `\\n` (libyaml also breaks at `\\r`, NEL, LS and PS) fall back to
one level a line and every `-`: rare, and still sound."""

from __future__ import annotations

from typing import Any

import yaml

_BLANKS = (" ", "\t", "\n", "\r")
_RARE_BREAKS = ("\r", "\x85", "\u2028", "\u2029")


def bound(text: str, enough: int) -> int:
    """At least the deepest nesting of `text`; counting stops being exact past `enough`."""
    if len(text) < enough:  # every level starts at a character of its own, but a mapping and its first key
        return len(text) + 1
    flow = 2 * text.count("[") + text.count("{")
    if any(b in text for b in _RARE_BREAKS):
        return flow + text.count("-") + 2 * text.count("?") + text.count("\n") + sum(text.count(b) for b in _RARE_BREAKS) + 1
    indicators = text.count("-") + 2 * text.count("?")
    if flow + indicators >= enough:  # hyphenated words: count only a `-` or `?` an indicator could be
        indicators = sum(text.count("-" + b) for b in _BLANKS) + 2 * sum(text.count("?" + b) for b in _BLANKS)
        indicators += 2 if text.endswith(("-", "?")) else 0
    return flow + indicators + 2 * (widest_indentation(text, enough) + 1)


def widest_indentation(text: str, enough: int) -> int:
    """The most spaces any line of `text` starts with, or `enough` if some line has that many.
    Found by doubling, then halving, a run of spaces after a line break: a few scans of the text
    at `in`'s speed, never a walk over its lines."""
    first = len(text) - len(text.lstrip(" "))
    if first >= enough:
        return enough

    def has(width: int) -> bool:
        return "\n" + " " * width in text

    low, high = 0, 1  # has(low) holds; find a width that does not
    while high < enough and has(high):
        low, high = high, min(2 * high, enough)
    if high >= enough and has(enough):
        return enough
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (middle, high) if has(middle) else (low, middle)
    return max(first, low)


def first_too_deep(text: str, loader_class: type, limit: int) -> Any:
    """The mark of the first collection nested deeper than `limit`, or None. Counts parser
    events, so it needs no recursion; an error of the parser's own propagates."""
    scanner = loader_class(text)
    try:
        depth = 0
        while scanner.check_event():
            event = scanner.get_event()
            if isinstance(event, yaml.CollectionStartEvent):
                depth += 1
                if depth > limit:
                    return event.start_mark
            elif isinstance(event, yaml.CollectionEndEvent):
                depth -= 1
    finally:
        scanner.dispose()
    return None


def through_line(text: str, line: int) -> str:
    """`text` up to the end of its 0-based line `line`, found without splitting the whole text."""
    end = -1
    for _ in range(line + 1):
        end = text.find("\n", end + 1)
        if end < 0:
            return text
    return text[: end + 1]
