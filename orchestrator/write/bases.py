"""Which document read from a file each resource bound for it is written as an edit of, and whose
text stands before it.

A resource's own text (its comments, key order, flow maps, the comments above its first line)
follows the resource, not its place: a function that swaps two documents of a file through their
index annotations moves each one whole, and neither is written as an edit of the other's text. A
resource is known by its identity (group, kind, namespace, name) among the documents its file
held, as kpt's function runner copies comments from input to output. The text between
documents (separators, documents that are not resources) and the file's tail are the file's:
they stay where they stood while the documents read there are still in the file, only elsewhere,
and each stands once. A resource moved in from another file is its own text, as any resource
moved to another file is; one renamed in place is an edit of the document read at its place when
that one is gone and of its kind; a new one is its own text."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from .. import annotations as ann
from ..read.package import Package
from ..resource import Resource, held_once
from .layout import owners, same_document

Identity = tuple[str, str, str, str]


@dataclass(frozen=True)
class Base:
    """`body`: the document read from the file whose text the resource is written as an edit of
    (None: the resource's own text); `around`: the document read at its place, whose prefix is
    the file's text before it (None: the resource's own prefix)."""

    body: Resource | None
    around: Resource | None


class Bases:
    """The bases of a file's resources (`ordered`, in index order), from the file's documents as
    read (`before`), the document read at an index (`original_at`) and whether an identity is
    a document read from another file only (`elsewhere`: one moved in, whose text is its own as
    for any resource moved to another file). Each identity is computed once (a big file's
    write-back asks for every resource's)."""

    def __init__(self, ordered: list[Resource], before: list[Resource], original_at: Callable[[int], Resource | None],
                 elsewhere: Callable[[Identity], bool]) -> None:
        self._elsewhere = elsewhere
        wanted = [ann.identity(r.data) for r in ordered]
        read = {id(b): ann.identity(b.data) for b in before}
        own = _own(ordered, wanted, before, read)
        self._moved = {id(original) for original in own.values()}  # read from this file, still in it
        holder = owners(ordered, original_at)
        self.each: list[Base] = []
        for position, resource in enumerate(ordered):
            at = original_at(resource.index) if holder.get(resource.index, position) == position else None
            there = None if at is None else read.get(id(at)) or ann.identity(at.data)
            self.each.append(self._base(wanted[position], at, there, own.get(position)))
        self._placed = {id(base.around) for base in self.each if base.around is not None}  # prefixes said where they stood

    def prefix(self, position: int, resource: Resource) -> str:
        """The text before the resource at `position`: the file's own at a place it was read at,
        else the resource's own unless the place it was read at says it (then a plain `---`)."""
        base = self.each[position]
        if base.around is not None:
            return base.around.prefix
        if base.body is not None and id(base.body) in self._placed:
            return ann.default_prefix(resource.index)
        return resource.prefix

    def _base(self, identity: Identity, at: Resource | None, there: Identity | None, mine: Resource | None) -> Base:
        """`identity`: the resource's; `at`: the document read at its index, `there` its identity."""
        if at is not None and identity == there:
            return Base(at, at)
        stays = at is not None and id(at) in self._moved  # its document went to another place of the file
        if mine is not None:
            return Base(mine, at if stays else None)
        if at is None or there is None or stays or identity[:2] != there[:2] or self._elsewhere(identity):
            return Base(None, at if stays else None)  # new, another kind of document (a list numbered by another tool), or moved in
        return Base(at, None)  # renamed in place

    def holds(self, resource: Resource, original: Resource) -> bool:
        """Whether the place `original` was read at still holds the file's text around it: the
        resource there is that document, or that document is elsewhere in the file."""
        return same_document(resource, original) or id(original) in self._moved


def _own(ordered: list[Resource], wanted: list[Identity], before: list[Resource], read: dict[int, Identity]) -> dict[int, Resource]:
    """Each resource's document as its file held it (by position in `ordered`), by an identity
    that one resource bound for the file and one document read from it have (a function that
    copies a resource, names unchanged, leaves both to their places)."""
    counts, by_identity = Counter(wanted), held_once((read[id(b)], b) for b in before)
    return {
        position: by_identity[key] for position, key in enumerate(wanted)
        if counts[key] == 1 and key in by_identity and ann.is_resource(ordered[position].data)
    }


def read_elsewhere(original: Package, path: str) -> Callable[[Identity], bool]:
    """Whether an identity is a document the package read from other files than `path` only; the
    package's identities are computed once, when first asked (a resource written where another
    of its kind was read, which is rare)."""

    def elsewhere(identity: Identity) -> bool:
        found = original.__dict__.get("_identities")
        if found is None:
            found = original.__dict__["_identities"] = {}
            for resource in original.resources:
                found.setdefault(ann.identity(resource.data), set()).add(resource.path)
        return identity in found and path not in found[identity]

    return elsewhere
