"""Sharding for CI matrices: `fnrun render DIR --shard I/N` renders a deterministic, balanced share
of DIR's independent packages, so N jobs of a CI system's matrix render a repository together and
the union of their shards is a full render.

Independent packages are the top-level ones: kpt packages with no kpt package above them (below
DIR, or DIR itself when it has a Kptfile: then there is one, and every shard but the first is
empty). `fnrun run DIR --shard I/N` shares out the same packages' declared functions. Shares are balanced by the number of files each package holds: packages are handed out
largest first, each to the shard holding the fewest files so far (ties to the lower shard), with
packages ordered by name among equals, so every job computes the same split.
"""

from __future__ import annotations

import posixpath
import re
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import InputError

if TYPE_CHECKING:
    from ..select.functions import FunctionSpec

_SHARD = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")


def parse(text: str) -> tuple[int, int]:
    """`2/5` -> (2, 5): shard 2 of 5, counted from 1."""
    match = _SHARD.match(text)
    if not match or not 1 <= int(match.group(1)) <= int(match.group(2)):
        raise InputError(f"--shard {text!r}: use I/N with 1 <= I <= N, e.g. 1/4")
    return int(match.group(1)), int(match.group(2))


def top_level(directories: list[str]) -> list[str]:
    """Package directories with no package directory above them ('' is DIR itself)."""
    packages = set(directories)
    return sorted(d for d in packages if not any(_inside(d, other) for other in packages if other != d))


def owner(directory: str, tops: list[str]) -> str | None:
    return next((top for top in tops if directory == top or _inside(directory, top)), None)


def share(tops: list[str], weights: dict[str, int], index: int, count: int) -> set[str]:
    """The top-level packages shard `index` of `count` renders."""
    loads = [0] * count
    mine: set[str] = set()
    for top in sorted(tops, key=lambda t: (-weights.get(t, 0), t)):
        target = min(range(count), key=lambda n: (loads[n], n))
        loads[target] += max(1, weights.get(top, 0))
        if target == index - 1:
            mine.add(top)
    return mine


def split(directories: list[str], paths: list[str], index: int, count: int) -> tuple[list[str], set[str]]:
    """The top-level packages among the package `directories`, and those shard `index` of
    `count` takes, balanced by how many of the files at `paths` each holds."""
    tops = top_level(directories)
    files = set(paths)
    weights = {top: sum(1 for path in files if owner(posixpath.dirname(path), [top])) for top in tops}
    return tops, share(tops, weights, index, count)


def run_share(specs: list[FunctionSpec], root: Path, paths: list[str], index: int, count: int) -> list[FunctionSpec]:
    """`fnrun run DIR --shard I/N`: the declared functions of this shard's top-level kpt packages
    (directories holding a Kptfile). A function outside every package, or one that sees the whole
    of DIR, belongs to no shard: refused, so the union of the shards stays a full run."""
    directories = sorted({"" if p.parent == root else p.parent.relative_to(root).as_posix() for p in root.rglob("Kptfile") if p.is_file()})
    if not directories:
        raise InputError(f"--shard: no kpt package (a directory with a Kptfile) in {root} to share out")
    tops, mine = split(directories, paths, index, count)
    chosen = []
    for spec in specs:
        if spec.declared_in is None or spec.global_scope:
            raise InputError("--shard shares out the declared functions by package; it does not go with --image, --exec or --global-scope")
        top = owner(spec.directory, tops)
        if top is None:
            raise InputError(f"{spec.declared_in}: declares a function outside every kpt package; --shard cannot give it to one shard")
        if top in mine:
            chosen.append(spec)
    return chosen


def _inside(path: str, directory: str) -> bool:
    if directory == "":
        return path != ""
    return path.startswith(directory + "/")
