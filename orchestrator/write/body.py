"""What text one resource is written as: the original bytes when it did not change, the original
changed by minimal text edits when it did (yamlio/textedit), the round trip when text edits
cannot say it (yamlio/roundtrip), and its own text when it is new."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Collection
from typing import Any

from .. import annotations as ann
from ..resource import Resource
from ..yamlio import comments, fast, meaning, roundtrip, textedit

_COMPACT_DASH = re.compile(r"^( *)[^\s#-][^#\n]*:[ \t]*\n\1- ", re.M)  # a block sequence at its key's column


#: The comments of every document a function was given (`writeback` reads them off the package).
Seen = Callable[[], Collection[str]]


def resolve_body(resource: Resource, base: Resource | None, seen: Seen = frozenset) -> str:
    """The text a resource is written as: the original bytes when it did not change, the original
    edited line by line when it did, and its own text when it is new.

    `seen`: the comments of the documents the function was given. A comment that comes back in
    this resource but was another document's (a YAML library hangs a comment on the node before
    it, so a file's header travels to the previous item) is not the function's: it stays where it
    was, and the original's own comments stay in place of the function's text."""
    if base is None and resource.original_text is not None:
        note = resource.original_text
        base = Resource(fast.load(note, "fnrun-original"), note, note)
    body = resource.body if resource.fresh else None
    if base is not None and base.body is not None:
        if body is not None and body == base.body:
            return base.body
        value = in_order_of(meaning.kept(resource.value, base.value, base.body), base.value)
        unchanged_value = roundtrip.same(value, base.value)
        if unchanged_value and (not resource.fresh or comments.same_comments(body or resource.text, base.body)):
            return base.body
        own = _own_comments(resource, base.body, seen) if resource.fresh else []
        edited = _text_edit(resource, base.body, value, base.value, bool(own))
        if edited is not None:
            return edited
        new_text = None  # the original's comments and layout are the base, unless the function wrote comments
        if own:  # its text then, without the comments other documents lent it
            new_text = _without_foreign(body if body is not None else _unstamped(resource), base.body, seen())
        return _ensure_newline(roundtrip.edit(base.body, new_text, value))
    if body is not None:
        text = _without_borrowed_edges(body, seen) if ann.is_resource(resource.data) else body  # not a listed file's other document
        return _ensure_newline(_noted_sequence_style(resource, text))
    if resource.fresh and resource._text is not None:
        return _ensure_newline(_noted_sequence_style(resource, _unstamped(resource)))
    return _ensure_newline(roundtrip.render(resource.body, resource.value) if resource.body else fast.dump(resource.value))


_START = object()  # in_order_of: "before every kept key"


def in_order_of(new: Any, old: Any) -> Any:
    """`new` with every mapping's kept keys in the order `old` has them, each new key still after
    the kept key it followed: key order means nothing in YAML, and a function that sorts keys
    (PyYAML does) must not make write-back move lines."""
    if isinstance(new, dict) and isinstance(old, dict):
        following: dict[Any, list[Any]] = {}
        previous = _START
        for key in new:
            if key in old:
                previous = key
            else:
                following.setdefault(previous, []).append(key)
        keys = following.get(_START, [])
        for key in old:
            if key in new:
                keys += [key, *following.get(key, [])]
        return {key: in_order_of(new[key], old.get(key)) for key in keys}
    if isinstance(new, list) and isinstance(old, list):
        return [in_order_of(item, old[n]) if n < len(old) else item for n, item in enumerate(new)]
    return new


def _noted_sequence_style(resource: Resource, own: str) -> str:
    """A new document's own text, with its block sequences indented when kyaml noted the file's as
    `wide` and the text has them compact (`kpt fn source` prints every item compact)."""
    if ann.annotations_of(resource.data).get(ann.SEQINDENT) != "wide" or not _COMPACT_DASH.search(own):
        return own
    return roundtrip.reindent(own, roundtrip.WIDE)


def _text_edit(resource: Resource, original: str, value: dict, old: dict, own_comments: bool) -> str | None:
    """The original changed into `value` by minimal text edits, or None (round trip instead) when
    they cannot express the change or the function wrote comments of its own that the result lacks
    (only dropping or moving some is not). The function's own text, without fnrun's annotations,
    means `value` (unless a layout note says its metadata was read otherwise): an edit that comes
    out as that text is known good without parsing it."""
    known = resource.body if resource.fresh and resource.original_text is None else None
    edited = textedit.edit(original, value, old, known, resource.known_edit) if original.endswith("\n") else None
    if edited is not None and own_comments:
        if _function_comments(resource) != comments.comments(edited):
            edited = None
    return edited


def _function_comments(resource: Resource) -> list[str]:
    return comments.comments(resource.body if resource.body is not None else resource.text)


def _real_comments(document: str) -> list[str]:
    """The comments of a document, without the `#` inside scalars (a block scalar's content, a
    quoted string over several lines, a `#` after a quote that a long line's fold put first on
    its line): a function that writes a string in another style writes no comment. The line scan
    finds every comment and maybe more; only where it finds any does the scanner tell them apart."""
    found = comments.comments(document)
    if not found:  # a `#` only inside values (a URL's fragment): the line scan's answer is enough
        return found
    return comments.scanned_comments(document)


def _own_comments(resource: Resource, original: str, seen: Seen) -> list[str]:
    """The comments the function wrote into this resource: in its text, not in the original, and
    in no other document it was given."""
    own_text = resource.body if resource.body is not None else resource.text
    mine = _real_comments(own_text)
    if not mine:
        return []
    extra = Counter(mine) - Counter(_real_comments(original))
    if not extra:
        return []
    known = seen()
    return [comment for comment in extra.elements() if comment not in known]


def _without_foreign(own: str, original: str, known: Collection[str]) -> str:
    """The function's text without the whole-line comments that were other documents' (beyond
    as many as the original holds): they came here with a neighbour, they are not this one's."""
    allowed = Counter(comments.comments(original))
    kept = []
    for line in own.splitlines(keepends=True):
        stripped = line.strip()
        if stripped.startswith("#"):
            comment = stripped[1:].strip()
            if allowed[comment] > 0:
                allowed[comment] -= 1
            elif comment in known:
                continue
        kept.append(line)
    return "".join(kept)


def _without_borrowed_edges(own: str, seen: Seen) -> str:
    """A new resource's text without the whole-line comments above its first line or below its
    last that were other documents' (a library writes a neighbour's foot comment at the next
    item's dash, and so into a new file)."""
    lines = own.splitlines(keepends=True)
    edge = [n for n, line in enumerate(lines) if line.lstrip().startswith("#")]
    if not edge or (edge[0] != 0 and edge[-1] != len(lines) - 1):
        return own
    known = seen()
    start, end = 0, len(lines)
    while start < end and _borrowed(lines[start], known):
        start += 1
    while end > start and _borrowed(lines[end - 1], known):
        end -= 1
    if not any(lines[n].strip() for n in range(start)):
        start = 0  # only blank lines: they are the file's own (a blank line after a closing comment)
    if not any(lines[n].strip() for n in range(end, len(lines))):
        end = len(lines)
    return "".join(lines[start:end])


def _borrowed(line: str, known: Collection[str]) -> bool:
    """A blank line, or a comment another document holds: what a neighbour lends with its edge."""
    stripped = line.strip()
    return not stripped or (stripped.startswith("#") and stripped[1:].strip() in known)


def _unstamped(resource: Resource) -> str:
    """The resource's own text without fnrun's annotations (round-trip edited: its layout was odd)."""
    return roundtrip.render(resource.text, resource.value)


def _ensure_newline(content: str) -> str:
    return content if content.endswith("\n") else content + "\n"
