"""Apply the change between two versions of a document to a third, line by line (diff3): how the
round-trip editor carries ruamel's edit of the original's tree back onto the original's text,
keeping every line the edit did not touch."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import TYPE_CHECKING

from .comments import comment_start, comments

if TYPE_CHECKING:
    from difflib import SequenceMatcher

# Where a merged line came from: the original's text, the new version's, or a comment of the
# original that a hunk would have dropped and that is kept (`_rehome`).
_ORIGINAL, _NEW, _RESCUED = 0, 1, 2


def _matcher(a: list[str], b: list[str]) -> SequenceMatcher[str]:
    """difflib's matcher, imported only when a merge needs it (most runs merge nothing)."""
    from difflib import SequenceMatcher

    return SequenceMatcher(None, a, b, autojunk=False)


def _sync_regions(base: list[str], a: list[str], b: list[str]) -> list[tuple[int, int, int, int, int, int]]:
    """Stretches where base, a and b agree (the classic diff3 sync regions)."""
    am = _matcher(base, a).get_matching_blocks()
    bm = _matcher(base, b).get_matching_blocks()
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


def _rehome(dropped: list[str], middle: list[tuple[int, str]], keep: frozenset[str]) -> list[tuple[int, str]]:
    """The hunk's new lines with the wanted comments of the original's lines (`dropped`) that
    ruamel lost with a deleted or rewritten node (it hangs a comment on the node before it): a
    full-line comment goes above the new line that reads as the original line just below it (the
    same text but for blanks, comments and the dashes that open it: a key whose item lost the
    keys above it gains the item's dash); failing that, above the hunk when it stood above its
    first line, else after it (above its last line when that opens a block scalar, whose text
    follows). An inline comment goes back on the new line that reads as its line, when that line
    has none and the new version holds it nowhere."""
    out = list(middle)
    present = {line.strip() for _, line in out}
    held = {text for _, line in out for text in [_inline(line)] if text is not None}
    front: list[tuple[int, str]] = []
    tail: list[tuple[int, str]] = []
    pending: list[tuple[int, str]] = []
    cursor = 0
    seen_content = False
    for line in dropped:
        if _is_comment(line):
            if line.strip() not in present and line.lstrip()[1:].strip() in keep:
                pending.append((_RESCUED, line))
            continue
        bare = _undashed(_bare(line))
        if not bare:
            continue
        at = next((j for j in range(cursor, len(out)) if _undashed(_bare(out[j][1])) == bare), None)
        if at is None:
            if seen_content:
                tail += pending
            else:
                front += pending
            pending = []
            seen_content = True
            continue
        seen_content = True
        out[at:at] = pending
        at += len(pending)
        pending = []
        text = _inline(line)
        if text is not None and text in keep and text not in held and _inline(out[at][1]) is None:
            kind, partner = out[at]
            body = partner.rstrip("\r\n")
            out[at] = (kind, f"{body}  # {text}{partner[len(body):]}")
            held.add(text)
        cursor = at + 1
    after = tail + pending
    if after and out and _opens_block_scalar(out[-1][1]):
        return front + out[:-1] + after + out[-1:]  # below the header would be in the scalar's text
    return front + out + after


def _inline(line: str) -> str | None:
    """The comment after a line's content, if any."""
    if _is_comment(line) or "#" not in line:
        return None
    start = comment_start(line)
    return None if start is None else line[start:].strip()


def _opens_block_scalar(line: str) -> bool:
    """Whether a line ends in a block scalar's header (`key: |-`, `- >2`): the lines after it
    are the scalar's text."""
    bare = _bare(line).rstrip("+-0123456789")
    return bare.endswith(("|", ">")) and (len(bare) == 1 or bare[-2] in " \t")


def _undashed(bare: str) -> str:
    """A line's content without the sequence dashes that open it: a key that became its item's
    first (the keys above it deleted) gains the item's dash, and still reads as the same line."""
    start = 0
    while bare.startswith("-", start) and bare[start + 1 : start + 2] in (" ", "\t"):
        start += 2
        while bare[start] in " \t":  # a line's content ends in neither (_bare strips it)
            start += 1
    return bare[start:]


def _bare(line: str) -> str:
    """A line's content without its comment and blanks ("" for a comment or blank line)."""
    if _is_comment(line):
        return ""
    start = comment_start(line) if "#" in line else None
    return (line if start is None else line[: start - 1]).strip()


def _refine(base: list[str], original: list[str], new: list[str]) -> list[tuple[int, str]]:
    """A hunk where the original is a line-for-line reformatting of ruamel's base: keep the
    original's line wherever new kept the base's (a key added next to `[ {port: 80} ]` must not
    turn it into `[port: 80]`); the original's comment lines that ruamel's base lacks aside (the
    caller puts them back where they stood). Each line with where it came from."""
    if len(original) != len(base):
        original = [line for line in original if not _is_comment(line)]
        if len(original) != len(base):
            return [(_NEW, line) for line in new]
    out: list[tuple[int, str]] = []
    for tag, i1, i2, j1, j2 in _matcher(base, new).get_opcodes():
        out += [(_ORIGINAL, line) for line in original[i1:i2]] if tag == "equal" else [(_NEW, line) for line in new[j1:j2]]
    return out


def merge_lines(original: list[str], base: list[str], new: list[str], keep: Iterable[str] = (), fine: bool = True) -> list[str]:
    """Apply base→new to original (diff3). Where original and base also differ, new wins (line by
    line when `fine`); full-line comments whose text is in `keep` survive a hunk that would drop them.
    `keep` is every comment the result should hold, as often as it should hold it: no comment ends
    up more often than that (`_once`)."""
    keep = list(keep)
    wanted = frozenset(keep)
    out: list[tuple[int, str]] = []
    iz = ia = ib = 0
    for zmatch, zend, amatch, aend, bmatch, bend in _sync_regions(base, original, new):
        z, a, b = base[iz:zmatch], original[ia:amatch], new[ib:bmatch]
        if a == b or b == z:
            out += [(_ORIGINAL, line) for line in a]
        else:
            out += _rehome(a, _refine(z, a, b) if fine else [(_NEW, line) for line in b], wanted)
        out += [(_ORIGINAL, line) for line in original[amatch:aend]]
        iz, ia, ib = zend, aend, bend
    return _once(out, Counter(keep)) if keep else [line for _, line in out]


def _once(out: list[tuple[int, str]], wanted: Counter[str]) -> list[str]:
    """The merged lines without the comments that would make a comment more frequent than
    `wanted`: a comment a function moved (or a re-indent shifted) stands in the new version at its
    new place, and the hunk at its old place would keep it too; a YAML library may also write a
    comment twice (ruamel repeats the comments of an anchored scalar where an alias of it is
    expanded). Comments kept from a dropped hunk go first, then the new version's, the last first
    (an expanded alias comes after its anchor); the original's own lines stay."""
    lines = [line for _, line in out]
    extra = Counter(comments("".join(lines))) - wanted
    for source in (_RESCUED, _NEW):
        for position in range(len(out) - 1, -1, -1) if extra else ():
            if out[position][0] == source and "#" in lines[position]:
                lines[position] = _without_extra_comment(lines[position], extra)
    return [line for line in lines if line]


def _without_extra_comment(line: str, extra: Counter[str]) -> str:
    """`line` without its comment when that comment is one too many ("" for a whole-line one)."""
    if _is_comment(line):
        text, start = line.lstrip()[1:].strip(), None
    else:
        start = comment_start(line)
        if start is None:
            return line
        text = line[start:].strip()
    if extra[text] <= 0:
        return line
    extra[text] -= 1
    if start is None:
        return ""
    body = line[: start - 1].rstrip(" \t")
    return body + line[len(line.rstrip("\r\n")) :]
