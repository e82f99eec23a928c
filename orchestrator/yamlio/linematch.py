"""Which lines two versions of a file share, in time about linear in their size.

difflib's SequenceMatcher has no such bound: it looks for the longest common run and recurses on
both sides, so a file with thousands of changes far apart (a label on every resource), or with
many lines that repeat, takes time that grows with the square of its length, or worse. Here the
common head and tail are taken off first, then lines that occur exactly once on each side and
in the same order (their longest increasing run, as patience diff does) anchor the rest; each
stretch between anchors is matched again the same way, a few levels deep, and a stretch small
enough goes to SequenceMatcher, whose cost its size bounds. What no level can match is replaced
whole: still a correct diff, and a small file gets SequenceMatcher's answer as before."""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from difflib import Match, SequenceMatcher

#: Up to this many lines in all, SequenceMatcher matches the whole file, as fnrun always did.
WHOLE = 1000
#: A stretch between anchors of at most this many lines in all goes to SequenceMatcher.
STRETCH = 200
#: How many times a stretch is anchored again on the lines unique within it.
DEPTH = 4

Block = tuple[int, int, int]  # (start in a, start in b, length), as difflib's Match


class Matcher(SequenceMatcher):
    """difflib's opcodes and grouped hunks over the shared lines `matching_blocks` finds."""

    # SequenceMatcher's own state, which its stubs leave out (set_seq2 below resets it)
    a: Sequence[str]
    b: Sequence[str]
    matching_blocks: list[Match] | None
    opcodes: list[tuple[str, int, int, int, int]] | None
    fullbcount: dict[str, int] | None

    def __init__(self, a: Sequence[str], b: Sequence[str], autojunk: bool = True) -> None:
        super().__init__(None, a, b, autojunk=autojunk)
        self._autojunk = autojunk

    def set_seq2(self, b: Sequence[str]) -> None:
        """b without difflib's index of its lines (`matching_blocks` does not use it)."""
        self.b = b
        self.matching_blocks = self.opcodes = None
        self.fullbcount = None

    def get_matching_blocks(self) -> list[Match]:
        if self.matching_blocks is None:
            self.matching_blocks = [Match(*block) for block in matching_blocks(self.a, self.b, self._autojunk)]
        return self.matching_blocks


def matching_blocks(a: Sequence[str], b: Sequence[str], autojunk: bool = True) -> list[Block]:
    """The runs of lines a and b share, in order, ending with (len(a), len(b), 0) as difflib's do."""
    if len(a) + len(b) <= WHOLE:
        return [(m.a, m.b, m.size) for m in SequenceMatcher(None, a, b, autojunk=autojunk).get_matching_blocks()]
    found: list[Block] = []
    _match(a, b, 0, len(a), 0, len(b), DEPTH, found)
    merged: list[Block] = []
    for i, j, size in found:
        if merged and merged[-1][0] + merged[-1][2] == i and merged[-1][1] + merged[-1][2] == j:
            merged[-1] = (merged[-1][0], merged[-1][1], merged[-1][2] + size)
        elif size:
            merged.append((i, j, size))
    merged.append((len(a), len(b), 0))
    return merged


def _match(a: Sequence[str], b: Sequence[str], alo: int, ahi: int, blo: int, bhi: int, depth: int, out: list[Block]) -> None:
    head = 0
    while alo + head < ahi and blo + head < bhi and a[alo + head] == b[blo + head]:
        head += 1
    tail = 0
    while alo + head < ahi - tail and blo + head < bhi - tail and a[ahi - 1 - tail] == b[bhi - 1 - tail]:
        tail += 1
    if head:
        out.append((alo, blo, head))
    alo, blo, ahi, bhi = alo + head, blo + head, ahi - tail, bhi - tail
    if alo < ahi and blo < bhi:
        if (ahi - alo) + (bhi - blo) <= STRETCH:
            matcher = SequenceMatcher(None, a[alo:ahi], b[blo:bhi], autojunk=False)
            out += [(alo + i, blo + j, size) for i, j, size in matcher.get_matching_blocks() if size]
        elif depth > 0:
            i, j = alo, blo
            for anchor_a, anchor_b in _anchors(a, b, alo, ahi, blo, bhi):
                _match(a, b, i, anchor_a, j, anchor_b, depth - 1, out)
                out.append((anchor_a, anchor_b, 1))
                i, j = anchor_a + 1, anchor_b + 1
            if i != alo:  # no anchor: the stretch is replaced whole
                _match(a, b, i, ahi, j, bhi, depth - 1, out)
    if tail:
        out.append((ahi, bhi, tail))


def _anchors(a: Sequence[str], b: Sequence[str], alo: int, ahi: int, blo: int, bhi: int) -> list[tuple[int, int]]:
    """Lines that occur once in a[alo:ahi] and once in b[blo:bhi], the longest run of them in the
    same order on both sides."""
    once_a, once_b = _once(a, alo, ahi), _once(b, blo, bhi)
    pairs = [(i, once_b[line]) for line, i in once_a.items() if line in once_b]  # in a order: a dict keeps it
    # Longest increasing run of b positions (pairs are in a order): patience sorting.
    tops: list[int] = []  # the b position ending the best run of each length
    ends: list[int] = []  # the pair index ending it
    previous = [-1] * len(pairs)
    for index, (_, j) in enumerate(pairs):
        length = bisect.bisect_left(tops, j)
        if length == len(tops):
            tops.append(j)
            ends.append(index)
        else:
            tops[length] = j
            ends[length] = index
        previous[index] = ends[length - 1] if length else -1
    run = []
    index = ends[-1] if ends else -1
    while index >= 0:
        run.append(pairs[index])
        index = previous[index]
    return run[::-1]


def _once(lines: Sequence[str], lo: int, hi: int) -> dict[str, int]:
    """The lines that occur once in lines[lo:hi], with their positions, in order."""
    once: dict[str, int] = {}
    seen: set[str] = set()
    for position in range(lo, hi):
        line = lines[position]
        if line in seen:
            once.pop(line, None)
        else:
            seen.add(line)
            once[line] = position
    return once
