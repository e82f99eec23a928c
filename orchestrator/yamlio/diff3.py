"""Apply the change between two versions of a document to a third, line by line (diff3): how the
round-trip editor carries ruamel's edit of the original's tree back onto the original's text,
keeping every line the edit did not touch."""

from __future__ import annotations

from difflib import SequenceMatcher


def _sync_regions(base: list[str], a: list[str], b: list[str]) -> list[tuple[int, int, int, int, int, int]]:
    """Stretches where base, a and b agree (the classic diff3 sync regions)."""
    am = SequenceMatcher(None, base, a, autojunk=False).get_matching_blocks()
    bm = SequenceMatcher(None, base, b, autojunk=False).get_matching_blocks()
    regions = []
    ia = ib = 0
    while ia < len(am) and ib < len(bm):
        abase, amatch, alen = am[ia]
        bbase, bmatch, blen = bm[ib]
        lo, hi = max(abase, bbase), min(abase + alen, bbase + blen)
        if lo < hi:
            asub, bsub = amatch + lo - abase, bmatch + lo - bbase
            regions.append((lo, hi, asub, asub + hi - lo, bsub, bsub + hi - lo))
        if abase + alen < bbase + blen:
            ia += 1
        else:
            ib += 1
    regions.append((len(base), len(base), len(a), len(a), len(b), len(b)))
    return regions


def _is_comment(line: str) -> bool:
    return line.lstrip().startswith("#")


def _kept_comments(dropped: list[str], replacement: list[str], keep: frozenset[str]) -> tuple[list[str], list[str]]:
    """Full-line comments of `dropped` that are wanted but that ruamel lost with a deleted or
    rewritten node (it hangs comments on the key before them): those above the first content
    line go before the replacement, the rest after it."""
    present = {line.strip() for line in replacement}
    before: list[str] = []
    after: list[str] = []
    seen_content = False
    for line in dropped:
        if not _is_comment(line):
            seen_content = seen_content or bool(line.strip())
            continue
        if line.strip() not in present and line.lstrip()[1:].strip() in keep:
            (after if seen_content else before).append(line)
    return before, after


def _refine(base: list[str], original: list[str], new: list[str]) -> list[str]:
    """A hunk where the original is a line-for-line reformatting of ruamel's base: keep the
    original's line wherever new kept the base's (a key added next to `[ {port: 80} ]` must not
    turn it into `[port: 80]`)."""
    if len(original) != len(base):
        return new
    out: list[str] = []
    for tag, i1, i2, j1, j2 in SequenceMatcher(None, base, new, autojunk=False).get_opcodes():
        out += original[i1:i2] if tag == "equal" else new[j1:j2]
    return out


def merge_lines(original: list[str], base: list[str], new: list[str], keep: frozenset[str] = frozenset(), fine: bool = True) -> list[str]:
    """Apply base→new to original (diff3). Where original and base also differ, new wins (line by
    line when `fine`); full-line comments whose text is in `keep` survive a hunk that would drop them."""
    out: list[str] = []
    iz = ia = ib = 0
    for zmatch, zend, amatch, aend, bmatch, bend in _sync_regions(base, original, new):
        z, a, b = base[iz:zmatch], original[ia:amatch], new[ib:bmatch]
        if a == b or b == z:
            out += a
        else:
            before, after = _kept_comments(a, b, keep)
            out += before + (_refine(z, a, b) if fine else b) + after
        out += original[amatch:aend]
        iz, ia, ib = zend, aend, bend
    return out
