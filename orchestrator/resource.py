"""A resource as it travels through fnrun: its plain value plus the YAML text it came as.

`data` is authoritative. `text` is the document as functions see it (comments kept, fnrun's
annotations stamped in) and `body` the same without fnrun's annotations, as it goes into a file.
When `fresh` is False the value was changed through the API and the texts are only a base for
comments and layout."""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from typing import Any, TypeVar

from . import annotations as ann
from .yamlio import fast, roundtrip
from .yamlio.textedit import KnownEdit


class Resource:
    __slots__ = ("data", "_text", "_body", "fresh", "_synced", "known_edit")

    def __init__(self, data: dict, text: str | None = None, body: str | None = None, fresh: bool = True) -> None:
        self.data = data
        self._text = text
        self._body = body
        self.fresh = fresh
        self._synced: str | None = None
        #: The text edit of its body into its value, where a step already worked it out (the
        #: write-back takes it while both are still the same); it goes where the resource goes.
        self.known_edit: KnownEdit | None = None

    @property
    def text(self) -> str:
        """The document with fnrun's annotations, for functions and `fnrun source`."""
        if self.fresh and self._text is not None:
            return self._text
        if self._synced is None:
            self._synced = roundtrip.render(self._text, self.data) if self._text else fast.dump(self.data)
        return self._synced

    def value_text(self) -> str:
        """The text of `value` (no fnrun annotations), as a file holds it: the body when fresh,
        else the base text edited to it. A changed value is rendered once, over its base text
        itself: rendering `text` first and the value over that costs twice as much, and where
        ruamel writes nested block sequences (`- - a`) indented otherwise than it reads them, the
        second pass re-indents lines nobody changed (tests/merge/test_render_once.py). Over
        `text` only where it was already made."""
        return self.rendered_value()[0]

    def rendered_value(self) -> tuple[str, tuple[Any, Any] | None]:
        """`value_text` with its node and value where rendering it parsed it to check it
        (`roundtrip.rendered`), for a caller that would parse it next; None where it did not."""
        if self.fresh and self._body is not None:
            return self._body, None
        base = self._synced if self._synced is not None else self._text or self.text
        return roundtrip.rendered(base, self.value)

    @property
    def body(self) -> str | None:
        """The document without fnrun's annotations, as the user wrote it; None when unknown."""
        return self._body

    @property
    def size(self) -> int:
        """How much text the resource holds (its own, or the base of its changed value): what
        working on it costs, without rendering a changed value's text to learn it."""
        return len(self._text or "")

    @property
    def path(self) -> str | None:
        return ann.get_path(self.data)

    @property
    def index(self) -> int:
        return ann.get_index(self.data)

    @property
    def prefix(self) -> str:
        value = ann.annotations_of(self.data).get(ann.PREFIX)
        return ann.default_prefix(self.index) if value is None else str(value)

    @property
    def suffix(self) -> str:
        return str(ann.annotations_of(self.data).get(ann.SUFFIX) or "")

    @property
    def file_format(self) -> str:
        """The file's line-end conventions, noted on its last resource (`crlf`, `no-final-newline`)."""
        return str(ann.annotations_of(self.data).get(ann.FILE_FORMAT) or "")

    @property
    def original_text(self) -> str | None:
        """The document as the user wrote it, when fnrun could not stamp it line by line."""
        value = ann.annotations_of(self.data).get(ann.ORIGINAL)
        return value if isinstance(value, str) else None

    @property
    def value(self) -> dict:
        """The resource without fnrun's annotations: what is compared and written."""
        return ann.without_stripped(self.data)

    def annotated(self, entries: list[tuple[str, Any]]) -> Resource:
        """The same document with these annotations set in its value; its texts still hold the
        old ones, which is harmless for fnrun's own (stripped before anything is written)."""
        data = dict(self.data)
        set_annotations(data, entries)
        annotated = Resource(data, self._text, self._body, self.fresh)
        annotated.known_edit = self.known_edit
        return annotated

    def replaced(self, data: dict, known_edit: KnownEdit | None = None) -> Resource:
        """The same resource with a new value (API edits, merges): keeps the old text as a base."""
        replaced = Resource(data, self._text, self._body, fresh=False)
        replaced.known_edit = known_edit
        return replaced

    def __repr__(self) -> str:
        meta = self.data.get("metadata") or {}
        name = meta.get("name") if isinstance(meta, dict) else None
        return f"<Resource {self.data.get('kind')}/{name} at {self.path}:{self.index}>"


K = TypeVar("K", bound=Hashable)


def held_once(pairs: Iterable[tuple[K, Resource]]) -> dict[K, Resource]:
    """Each key with its resource, for the keys only one pair holds: two resources that share a
    key (a path and index, an identity) name neither. Each key is computed once by the caller's
    generator (an identity costs a walk into the metadata)."""
    found: dict[K, Resource] = {}
    shared: set[K] = set()
    for key, resource in pairs:
        if key in found:
            shared.add(key)
        found[key] = resource
    return {key: resource for key, resource in found.items() if key not in shared}


def set_annotations(data: dict, entries: list[tuple[str, Any]]) -> None:
    """Set annotations on `data` through fresh copies of its metadata and annotations maps: a
    YAML alias can share those maps with another place in the document, which must not change."""
    meta = data.get("metadata")
    meta = dict(meta) if isinstance(meta, dict) else {}
    annotations = meta.get("annotations")
    annotations = dict(annotations) if isinstance(annotations, dict) else {}
    annotations.update(entries)
    meta["annotations"] = annotations
    data["metadata"] = meta
