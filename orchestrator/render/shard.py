"""Sharding for CI matrices: `fnrun render DIR --shard I/N` renders a deterministic, balanced share
of DIR's independent packages, so N jobs of a CI system's matrix render a repository together and
the union of their shards is a full render.

Independent packages are the top-level ones: kpt packages with no kpt package above them (below
DIR, or DIR itself when it has a Kptfile: then there is one, and every shard but the first is
empty). Shares are balanced by the number of files each package holds: packages are handed out
largest first, each to the shard holding the fewest files so far (ties to the lower shard), with
packages ordered by name among equals, so every job computes the same split.
"""

from __future__ import annotations

import posixpath
import re

from ..errors import InputError

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


def _inside(path: str, directory: str) -> bool:
    if directory == "":
        return path != ""
    return path.startswith(directory + "/")
