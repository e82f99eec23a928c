"""Sequence items that open on a lone dash (`-` alone or with a comment, the item's content on a
later line), seen as ruamel writes them: the comments above the dash, the content on its line.

The round-trip merge lines the original up with ruamel's dump of it (diff3.py). Written the
user's way, such an item differs from that dump on its dash line and its first content line, so
the merge kept the user's dash where the edit had put its own, and the two dashes made another
item or no YAML at all. The merge works on this view of the original instead, and each item
that comes through it unchanged goes back to the user's lines.

One pass over the lines: each line is looked at a bounded number of times."""

from __future__ import annotations

from dataclasses import dataclass, field

from .comments import comment_start


@dataclass
class View:
    """The original's lines with every lone-dash item joined; `groups` maps the id of each joined
    line (kept alive here) to that item's lines in the view and in the original."""

    lines: list[str]
    groups: dict[int, tuple[list[str], list[str]]] = field(default_factory=dict)


def opens_block_scalar(line: str) -> bool:
    """Whether a line ends in a block scalar's header (`key: |-`, `- >2`, `|`): the lines after it
    are the scalar's text."""
    if line.lstrip().startswith("#"):
        return False
    start = comment_start(line) if "#" in line else None
    bare = (line if start is None else line[: start - 1]).strip().rstrip("+-0123456789")
    return bare.endswith(("|", ">")) and (len(bare) == 1 or bare[-2] in " \t")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _lone_dash(line: str) -> str | None:
    """The comment (from its `#`, with the line end) of a line that holds only a sequence dash and
    maybe a comment; "" when it has none; None when the line is not such a dash."""
    body = line.lstrip(" ")
    if not body.startswith("-"):
        return None
    rest = body[1:]
    if not rest.strip():
        return ""
    after = rest.lstrip(" \t")
    return after if after.startswith("#") and rest[0] in " \t" else None


def _blank_or_comment(line: str) -> bool:
    stripped = line.strip()
    return not stripped or stripped.startswith("#")


def joined(lines: list[str]) -> View:
    """`lines` with each item that opens on a lone dash written as ruamel writes it: the dash's
    comment on its own line at the content's indentation, the comment and blank lines after the
    dash as they were, then the dash on the first content line (`-   key: v` keeps the content's
    column, so the item means the same). An item with no content (a null) and the text of block
    scalars stay as they are."""
    view = View([])
    scalar = -1  # inside a block scalar: its header line's indentation (its text is deeper)
    count = len(lines)
    n = 0
    while n < count:
        line = lines[n]
        if scalar >= 0 and (not line.strip() or _indent(line) > scalar):
            view.lines.append(line)
            n += 1
            continue
        scalar = -1
        comment = _lone_dash(line)
        end = n + 1
        if comment is not None:
            while end < count and _blank_or_comment(lines[end]):
                end += 1
        dash = _indent(line)
        if comment is None or end == count or _indent(lines[end]) <= dash:
            if opens_block_scalar(line):
                scalar = _indent(line)
            view.lines.append(line)
            n += 1
            continue
        content = lines[end]
        inner = _indent(content)
        last = " " * dash + "-" + " " * (inner - dash - 1) + content[inner:]
        group = ([" " * inner + comment] if comment else []) + lines[n + 1 : end] + [last]
        view.groups[id(last)] = (group, lines[n : end + 1])
        view.lines += group
        if opens_block_scalar(content):
            scalar = inner
        n = end + 1
    return view


def restored(tagged: list[tuple[int, str]], view: View, kept: int) -> list[tuple[int, str]]:
    """Merged lines, each a (source, line) pair, with every joined item whose view lines all came
    through in order from the view (source `kept`) written back as the original's lines."""
    if not view.groups:
        return tagged
    out: list[tuple[int, str]] = []
    for source, line in tagged:
        out.append((source, line))
        entry = view.groups.get(id(line)) if source == kept else None
        if entry is None or entry[0][-1] is not line:
            continue
        group, original = entry
        size = len(group)
        if len(out) >= size and all(s == kept and got is want for (s, got), want in zip(out[-size:], group)):
            del out[-size:]
            out += [(kept, text) for text in original]
    return out
