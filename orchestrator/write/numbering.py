"""Lists numbered by another tool: `kpt fn source` counts every document of a file in
`config.kubernetes.io/index`, fnrun counts only resources and keeps a file's other documents (a
values block, a bare list) as the text around them. Matched by number, the resources of such a
file would each meet another resource's original, and be written from the tool's text instead
of edited in place."""

from __future__ import annotations

from .. import annotations as ann
from ..errors import InputError
from ..resource import Resource
from ..yamlio import fast, text


def aligned(resources: list[Resource], before: list[Resource]) -> list[Resource]:
    """`resources` bound for one file, in index order, renumbered as fnrun read it (`before`)
    when they are that file's resources in the same order and their numbers differ; the file's
    other documents, where the list carries them unchanged, are left to the text around the
    resources. Anything else (a resource added, removed or moved, another document changed) keeps
    the numbers it came with."""
    ordered = sorted(resources, key=lambda r: r.index)
    if not before or len(ordered) < len(before):
        return ordered
    own = [r for r in ordered if ann.is_resource(r.data)]
    if len(own) != len(before) or all(r.index == b.index for r, b in zip(own, before)):
        return ordered
    if [ann.identity(r.data) for r in own] != [ann.identity(b.data) for b in before]:
        return ordered
    others = [r.value for r in ordered if not ann.is_resource(r.data)]
    if others and others != _other_documents(before):
        return ordered
    return [r.annotated([(key, str(b.index)) for key in (ann.INDEX, ann.INTERNAL_INDEX) if key in ann.annotations_of(r.data)]) for r, b in zip(own, before)]


def _other_documents(before: list[Resource]) -> list[object]:
    """The values of the documents that are not resources, in the text around `before`."""
    around = "".join(r.prefix for r in before) + before[-1].suffix
    path = before[0].path or ""
    try:
        values = [fast.load(s.text, path) for s in text.split_documents(around) if not s.separator]
    except InputError:  # an odd document (duplicate key, tag): not compared, not dropped
        return [None]
    return [v for v in values if v is not None]
