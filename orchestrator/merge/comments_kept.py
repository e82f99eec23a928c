"""A function's output handed on with the comments its input had, as kpt hands it on.

A function that reads and writes YAML without its comments (PyYAML, JSON, most languages' plain
decoders) returns items with none. kpt copies the input's comments back onto each output item it
can pair with an input (by its id), so the next step still finds them: `apply-setters` its
`# kpt-set:` markers after any such step. The write-back keeps the user's comments in the files
either way (it edits their text to the new values); what differs is what the next function reads.

Here an item returned without a single comment, paired with an item sent with some, is handed on
as that sent item given the new value: its text, rendered when a function or the write-back needs
it, is the sent text edited to the value (comments kept where their fields still are). An item
that kept some comments is the function's own text: it chose them."""

from __future__ import annotations

from dataclasses import replace

from ..resource import Resource
from ..yamlio.comments import comments
from .origin import Changes


def with_comments_kept(changes: Changes, returned: list[Resource]) -> tuple[Changes, list[Resource]]:
    """`changes` and `returned` where an item lost every comment its sent item had: that item
    given its value (the sent item itself where the function left it as it was, in its place).
    The pairs name what is handed on, so lineage (origin, transformations) follows it."""
    instead: dict[int, Resource] = {}
    pairs = []
    for before, item, changed in changes.pairs:
        if _lost_every_comment(before, item):
            same_place = not changed and (before.path, before.index) == (item.path, item.index)
            handed = instead[id(item)] = before if same_place else before.replaced(item.data)
            item = handed
        pairs.append((before, item, changed))
    if not instead:
        return changes, returned
    return replace(changes, pairs=pairs), [instead.get(id(item), item) for item in returned]


def _lost_every_comment(before: Resource, item: Resource) -> bool:
    """The item is a function's own text with no comment, and the one sent had comments. A text
    with no `#` at all is decided without a scan; the sent side is scanned only then."""
    if not item.fresh or item is before:
        return False
    text = item.text
    if "#" in text and comments(text):
        return False
    sent = before.body if before.body is not None else before.text
    return "#" in sent and bool(comments(sent))
