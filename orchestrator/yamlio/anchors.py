"""Anchor names belong to their document: two files of a package may both define `&labels`. A
ResourceList is one YAML document, where PyYAML (and so many functions) refuses an anchor defined
twice, so an item whose anchor names an earlier item already defined gets them renamed on the
way to the function (`&labels` -> `&labels-2`, its aliases with it). Files keep their own names:
write-back compares what comes back by value."""

from __future__ import annotations

import yaml

from . import fast

_NAME_ENDS = frozenset(" \t\r\n,[]{}")


def apart(text: str, used: set[str] | frozenset[str] = frozenset()) -> tuple[str, set[str]]:
    """The document with its anchors that `used` names renamed (the same text where none clash),
    and the names it defines then."""
    marks = _marks(text) if "&" in text else []
    names = {name for _, _, kind, name in marks if kind == "&"}
    clash = names & used
    if clash:
        taken = set(used) | names
        renames = {}
        for name in sorted(clash):
            renames[name] = _fresh(name, taken)
            taken.add(renames[name])
        renamed = _renamed(text, marks, renames)
        if renamed is not None:
            return renamed, (names - clash) | set(renames.values())
    return text, names


def _marks(text: str) -> list[tuple[int, int, str, str]]:
    """(line, column, `&` or `*`, name) of every anchor and alias, in document order; [] when the
    text does not parse (it reaches the function as it is)."""
    loader = fast.StrictLoader(text)
    found = []
    try:
        while True:
            event = loader.get_event()
            if event is None or isinstance(event, yaml.StreamEndEvent):
                break
            name = getattr(event, "anchor", None)
            if name:
                kind = "*" if isinstance(event, yaml.AliasEvent) else "&"
                found.append((event.start_mark.line, event.start_mark.column, kind, name))
    except yaml.YAMLError:
        return []
    finally:
        loader.dispose()
    return found


def _fresh(name: str, taken: set[str]) -> str:
    number = 2
    while f"{name}-{number}" in taken:
        number += 1
    return f"{name}-{number}"


def _renamed(text: str, marks: list[tuple[int, int, str, str]], renames: dict[str, str]) -> str | None:
    """`text` with the anchors and aliases in `renames` renamed, found at their marks (a tag may
    stand before an anchor on its line); None when one is not where the parser put it."""
    lines = text.splitlines(keepends=True)
    for line, column, kind, name in reversed(marks):
        if name not in renames:
            continue
        token = kind + name
        at = lines[line].find(token, column)
        while at >= 0 and lines[line][at + len(token) : at + len(token) + 1] not in _NAME_ENDS | {""}:
            at = lines[line].find(token, at + 1)
        if at < 0:
            return None
        lines[line] = lines[line][:at] + kind + renames[name] + lines[line][at + len(token) :]
    return "".join(lines)
