"""What text one resource is written as: the original bytes when it did not change, the original
changed by minimal text edits when it did (yamlio/textedit), the round trip when text edits
cannot say it (yamlio/roundtrip), and its own text when it is new."""

from __future__ import annotations

import re
from collections import Counter
from typing import Callable

from .. import annotations as ann
from ..resource import Resource
from ..yamlio import fast, roundtrip, text, textedit

_COMPACT_DASH = re.compile(r"^( *)[^\s#-][^#\n]*:[ \t]*\n\1- ", re.M)  # a block sequence at its key's column


def resolve_body(resource: Resource, base: Resource | None) -> str:
    """The text a resource is written as: the original bytes when it did not change, the original
    edited line by line when it did, and its own text when it is new."""
    if base is None and resource.original_text is not None:
        note = resource.original_text
        base = Resource(fast.load(note, "fnrun-original"), note, note)
    body = resource.body if resource.fresh else None
    if base is not None and base.body is not None:
        if body is not None and body == base.body:
            return base.body
        value = resource.value
        unchanged_value = roundtrip.same(value, base.value)
        if unchanged_value and (not resource.fresh or text.same_comments(body or resource.text, base.body)):
            return base.body
        edited = _text_edit(resource, base.body, value, base.value)
        if edited is not None:
            return edited
        new_text = (body if body is not None else _unstamped(resource)) if resource.fresh else None
        return _ensure_newline(roundtrip.edit(base.body, new_text, value))
    if body is not None:
        return _ensure_newline(_noted_sequence_style(resource, body))
    if resource.fresh and resource._text is not None:
        return _ensure_newline(_noted_sequence_style(resource, _unstamped(resource)))
    return _ensure_newline(roundtrip.render(resource.body, resource.value) if resource.body else fast.dump(resource.value))


def _noted_sequence_style(resource: Resource, own: str) -> str:
    """A new document's own text, with its block sequences indented when kyaml noted the file's as
    `wide` and the text has them compact (`kpt fn source` prints every item compact)."""
    if ann.annotations_of(resource.data).get(ann.SEQINDENT) != "wide" or not _COMPACT_DASH.search(own):
        return own
    return roundtrip.reindent(own, roundtrip.WIDE)


def _text_edit(resource: Resource, original: str, value: dict, old: dict) -> str | None:
    """The original changed into `value` by minimal text edits, or None (round trip instead) when
    they cannot express the change or the function's comments differ from the result's."""
    edited = textedit.edit(original, value, old) if original.endswith("\n") else None
    if edited is not None and resource.fresh:
        own = resource.body if resource.body is not None else resource.text
        if _new_comments(own, edited, original, text.comments) and _new_comments(own, edited, original, text.scanned_comments):
            edited = None  # the function wrote comments of its own (only dropping or moving some is not)
    textedit.counts["text" if edited is not None else "roundtrip"] += 1
    return edited


def _new_comments(own: str, edited: str, original: str, scan: Callable[[str], list[str]]) -> bool:
    """Whether the function's text has comments the edit lacks and the original did not have.
    The line scan decides first; the YAML scanner confirms (a folded quoted scalar fools lines)."""
    wanted = scan(own)
    return bool(wanted) and wanted != scan(edited) and bool(Counter(wanted) - Counter(scan(original)))


def _unstamped(resource: Resource) -> str:
    """The resource's own text without fnrun's annotations (round-trip edited: its layout was odd)."""
    return roundtrip.render(resource.text, resource.value)


def _ensure_newline(content: str) -> str:
    return content if content.endswith("\n") else content + "\n"
