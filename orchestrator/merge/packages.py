"""Merging whole packages: resources matched by identity, fields by the merge rules, the result
written through the package write-back so the destination keeps its comments and formatting."""

from __future__ import annotations

from pathlib import Path

from .. import annotations as ann
from ..read.package import Package, read_package
from ..resource import Resource
from ..write.writeback import WritePlan, write
from . import merge2_resources, merge3_resources


def merge(sources: list[Path | str], destination: Path | str, workers: int | None = None) -> WritePlan:
    """Two-way merge each source package onto the destination, in order (`workers`: FNRUN_WORKERS
    as the edge read it, for reading and writing big packages)."""
    dest = read_package(destination, workers=workers)
    source_packages = [read_package(s, workers=workers) for s in sources]
    merged = [r.data for r in dest.resources]
    for package in source_packages:
        merged = merge2_resources([r.data for r in package.resources], merged)
    return write(destination, _as_resources(merged, dest, source_packages), dest, workers)


def merge3(ancestor: Path | str, updated: Path | str, destination: Path | str, workers: int | None = None) -> WritePlan:
    """Three-way merge: what changed from ancestor to updated is applied to the destination."""
    original, upstream, dest = (read_package(path, workers=workers) for path in (ancestor, updated, destination))
    merged = merge3_resources(
        [r.data for r in original.resources], [r.data for r in upstream.resources], [r.data for r in dest.resources]
    )
    return write(destination, _as_resources(merged, dest, [upstream]), dest, workers)


def _as_resources(merged: list[dict], dest: Package, sources: list[Package]) -> list[Resource]:
    """Merged values back as resources, each keeping the text it came with as its layout base:
    the destination's for resources it had, the source's for new ones (at their source path)."""
    known = {ann.identity(r.data): r for r in dest.resources}
    for package in reversed(sources):
        for resource in package.resources:
            known.setdefault(ann.identity(resource.data), resource)
    return [known[ann.identity(data)].replaced(data) if ann.identity(data) in known else Resource(data) for data in merged]
