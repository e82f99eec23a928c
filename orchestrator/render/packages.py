"""The package tree a render walks: directories holding a Kptfile, in kpt's order.

Depth-first (kpt's default): every subpackage before the package holding it, siblings in path
order, so a parent's pipeline sees what its subpackages rendered. `kpt.dev/bfs-rendering: "true"`
on the root Kptfile turns this top-down. Each pipeline's scope is its directory and everything
below it, which is what fnrun's directory scope already gives a function declared in the Kptfile."""

from __future__ import annotations

import posixpath

from ..errors import InputError
from ..resource import Resource
from . import kptfile
from .kptfile import Kptfile


def kptfiles(resources: list[Resource]) -> dict[str, Kptfile]:
    """Every Kptfile of the package, by directory ('' is the root)."""
    found: dict[str, Kptfile] = {}
    for resource in resources:
        if kptfile.is_kptfile(resource):
            parsed = kptfile.parse(resource)
            if parsed.directory in found:
                raise InputError(f"{parsed.path}: more than one Kptfile document")
            found[parsed.directory] = parsed
    if not found:
        raise InputError("no Kptfile at the package root or below (fnrun render needs a kpt package, or a directory of them; `fnrun run` runs annotation-declared functions)")
    return found


def order(found: dict[str, Kptfile]) -> list[Kptfile]:
    """The pipelines in the order they run."""
    bfs = "" in found and found[""].flag(kptfile.BFS)
    children: dict[str, list[str]] = {d: [] for d in [*found, ""]}
    for directory in found:
        if directory:
            children[_parent(directory, found)].append(directory)
    result: list[Kptfile] = []

    def visit(directory: str) -> None:
        for child in sorted(children[directory]):
            visit(child)
        if directory in found:  # a directory of packages has no pipeline of its own
            result.append(found[directory])

    if bfs:  # top-down, level by level
        level = [""]
        while level:
            result += [found[d] for d in level]
            level = [c for d in level for c in sorted(children[d])]
        return result
    visit("")
    return result


def _parent(directory: str, found: dict[str, Kptfile]) -> str:
    parent = posixpath.dirname(directory)
    while parent and parent not in found:
        parent = posixpath.dirname(parent)
    return parent
