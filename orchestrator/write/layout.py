"""Where a file's own text goes when its documents change: the separators and comments between
them, what opened the file, what ends it. The write-back's file assembly asks these."""

from __future__ import annotations

import bisect
from collections.abc import Callable

from .. import annotations as ann
from ..resource import Resource
from ..yamlio import text


def tail(before: list[Resource], ordered: list[Resource], holds: Callable[[Resource, Resource], bool]) -> str:
    """What ends the file: the file's own tail (`...`, a footer comment, documents that are not
    resources) when its last document's place still holds the file's text (`holds`: that
    document is still there, or elsewhere in the file), even with new resources after it; else
    the last resource's own."""
    last = before[-1] if before else None
    at = next((n for n in range(len(ordered) - 1, -1, -1) if last is not None and ordered[n].index == last.index), None)
    if at is None or last is None or not holds(ordered[at], last):
        return ordered[-1].suffix
    after = ordered[at + 1 :]
    if not after or (not ordered[-1].suffix and all(ann.is_resource(r.data) for r in after)):
        return last.suffix
    return ordered[-1].suffix  # a list that carries the file's other documents as items (kpt fn source)


def same_document(resource: Resource, base: Resource | None) -> bool:
    """Whether the document read at this place is still this resource (same kind and name): then
    the text around it in the file is the file's own, whatever the function did to its notes. A
    list from another tool (`kpt fn source` counts every document, fnrun only resources) can put
    another document at that place."""
    return base is not None and ann.identity(resource.data) == ann.identity(base.data)


def opening(before: list[Resource], kept: set[int]) -> str:
    """How the file opened (`---`, `--- # comment`, or nothing) when its first resource is gone."""
    if not before or before[0].index in kept:
        return ""
    lines = before[0].prefix.splitlines(keepends=True)
    return before[0].prefix if lines and all(text.is_separator(line) for line in lines) else ""


def carried(before: list[Resource], indexes: list[int], after: int, until: int, kept: set[int]) -> str:
    """What deleted resources between two kept ones leave behind: the non-resource documents
    (and non-default separators) that stood before them in the file. `before` is in index order
    (`indexes` are theirs), so only the resources in between are looked at, not the whole file
    again for each kept one."""
    carried = []
    for position in range(bisect.bisect_right(indexes, after), bisect.bisect_left(indexes, until)):
        if indexes[position] not in kept:
            carried.append(without_separator(before[position].prefix))
    return "".join(carried)


def without_separator(prefix: str) -> str:
    """A deleted resource's prefix without the `---` that opened the resource itself; "" when
    nothing but separators remains."""
    lines = prefix.splitlines(keepends=True)
    while lines and not lines[-1].strip():
        lines.pop()
    if lines and text.is_separator(lines[-1]) and lines[-1].startswith("---"):
        lines.pop()
    if all(text.is_separator(line) or not line.strip() for line in lines):
        return ""
    return "".join(lines)


def owners(ordered: list[Resource], original: Callable[[int], Resource | None]) -> dict[int, int]:
    """For an index that several resources share (a function added one without an index to a
    file), the position of the one that is the document read there (same kind and name, else the
    first): only it is written as an edit of that document's text, the others from their own."""
    positions: dict[int, list[int]] = {}
    for position, resource in enumerate(ordered):
        positions.setdefault(resource.index, []).append(position)
    found = {}
    for index, shared in positions.items():
        if len(shared) > 1:
            base = original(index)
            found[index] = next((p for p in shared if same_document(ordered[p], base)), shared[0])
    return found
