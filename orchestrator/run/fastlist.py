"""Decoding a ResourceList laid out the way fnrun writes one, item by item as its lines arrive.

`fnrun source | fnrun sink` moves 10,000 items through a pipe. Composing the whole list as one
YAML document means the sink can do nothing until the source is done; cutting it into items by
their column-0 dashes lets the sink parse each item while the source still reads files, on the
other core. Anything this layout does not cover (other headers, flow items, CRLF, `---`,
an item that does not parse on its own, aliases between items) raises `NotFast`, and the caller
decodes the whole input the general way: same results, or the same error."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any

from .. import annotations as ann, workers
from ..errors import FnrunError, InputError
from ..resource import Resource
from ..yamlio import fast, text

#: What `fnrun source` writes instead of its remaining items when it fails after output began:
#: a reserved YAML indicator at column 0, so no YAML parser takes the truncated list as complete.
FAILURE_NOTE = "@fnrun: "

_VERSIONS = ("config.kubernetes.io/v1", "config.kubernetes.io/v1beta1", "config.kubernetes.io/v1alpha1")
HEADERS = {f"apiVersion: {version}\nkind: ResourceList\nitems:\n" for version in _VERSIONS}
_ODD_BREAKS = re.compile("[\r\x85\u2028\u2029]")  # line breaks other than \n: leave them to the general path
_OTHER_LINE = text.LineStart(r"[^-# \n]|-[^ ]| [^ ]")  # not `- `, `  `, `#` or blank: the items end
_DASH = text.LineStart("- ")
_ODD_DASH = text.LineStart(r"- [ #\n&!{\[*|>'\"?:-]")  # an item that is not a block mapping at column 2
_CONTINUATION = text.LineStart("  ")
_DEDENT = text.LineStart("  |- ")  # `text.dedent_item` for items at column 0 with content at column 2


class NotFast(Exception):
    """The input is not in fnrun's own layout: decode it the general way."""


class FastDecoder:
    """Feed blocks of whole lines; `finish` returns (items, functionConfig, results).

    The text of the current item is kept from its head comments on; an item is parsed when the
    next dash shows where it ends (its head comments go with the next item, as in `resourcelist`)."""

    def __init__(self, source: str, on_item: Callable[[Resource], None] | None = None, share_among: int = 0) -> None:
        self.source = source
        self.on_item = on_item
        # > 0: the text is all there and big; keep items' blocks and parse them on every core at the end
        self.share_among = share_among
        self.blocks: list[str] = []
        self.header = ""
        self.items: list[Resource] = []
        self.buffer = ""  # the current item from its head comments on (before the first item: what follows `items:`)
        self.dash: int | None = None  # offset in `buffer` of the current item's dash line
        self.tail: list[str] | None = None  # from the first top-level key after the items on

    def feed(self, block: str) -> None:
        if self.tail is not None:
            self.tail.append(block)
            return
        if self.header.count("\n") < 3:
            lines = block.splitlines(keepends=True)
            while lines and self.header.count("\n") < 3:
                self.header += lines.pop(0)
            if self.header.count("\n") < 3:
                return
            if self.header not in HEADERS:
                raise NotFast
            block = "".join(lines)
        other = _OTHER_LINE.search(block)
        self._items(block if other is None else block[:other])
        if other is not None:
            rest = block[other:]
            if rest.startswith(FAILURE_NOTE):
                note = rest[len(FAILURE_NOTE) :].split("\n", 1)[0].strip()
                raise InputError(f"{self.source}: the input stops where its producer failed ({note})")
            if self.dash is None:
                raise NotFast
            self._emit(self.buffer)
            self.tail = [rest]

    def _items(self, part: str) -> None:
        if _ODD_DASH.search(part) is not None:
            raise NotFast
        buffer = self.buffer + part
        base, dash = 0, self.dash  # the current item's first offset and its dash's, in `buffer`
        for at in _DASH.finditer(buffer, len(self.buffer)):
            if dash is None:
                if _CONTINUATION.search(buffer, 0, at) is not None:
                    raise NotFast
                start = _head_start(buffer, at, 0)
            else:
                start = _head_start(buffer, at, buffer.index("\n", dash) + 1)
                self._emit(buffer[base:start])
            base, dash = start, at
        self.buffer = buffer[base:]
        self.dash = None if dash is None else dash - base

    def _emit(self, block: str) -> None:
        if self.share_among:
            self.blocks.append(block)
            return
        item = parse_item(block, self.source)
        if item is None:
            raise NotFast
        self.items.append(item)
        if self.on_item is not None:
            self.on_item(item)

    def _parse_blocks(self) -> None:
        """The kept blocks parsed in forked workers, in order (orchestrator.workers)."""
        blocks, source = self.blocks, self.source

        def share(start: int, end: int) -> list[Resource | None]:
            return [parse_item(block, source) for block in blocks[start:end]]

        for part in workers.fork_map(share, [len(block) for block in blocks], self.share_among):
            read = [item for item in part if item is not None]
            if len(read) < len(part):
                raise NotFast
            self.items.extend(read)
        if self.on_item is not None:
            for item in self.items:
                self.on_item(item)

    def finish(self) -> tuple[list[Resource], dict | None, list[Any]]:
        if self.header not in HEADERS or self.dash is None:
            raise NotFast
        if self.tail is None:
            self._emit(self.buffer)
        if self.share_among:
            self._parse_blocks()
        if self.tail is None:
            return self.items, None, []
        try:
            rest = fast.load(self.header.rsplit("items:", 1)[0] + "".join(self.tail), self.source)
        except FnrunError:
            raise NotFast from None
        config, results = rest.get("functionConfig"), rest.get("results") or []
        if "items" in rest or not isinstance(config, (dict, type(None))) or not isinstance(results, list):
            raise NotFast
        return self.items, config, results


def parse_item(block: str, source: str) -> Resource | None:
    """One item parsed on its own; None when it is not a resource that parses alone."""
    item_text = _DEDENT.sub("", block)
    try:
        node, data = fast.parse(item_text, source)
    except FnrunError:
        return None
    if not ann.is_resource(data):
        return None
    doomed = text.strip_lines(item_text.splitlines(keepends=True), node, ann.STRIPPED_KEYS, note=ann.ORIGINAL)
    body = None if doomed is None else text.delete_lines(item_text, doomed)
    return Resource(data, item_text, body)


def _head_start(buffer: str, dash: int, floor: int) -> int:
    """Where the head comments above the dash at `dash` begin (`text.item_head` on offsets): the
    column-0 comments, and blank lines between them, directly above it and not above `floor`."""
    start = dash
    end = dash
    while end > floor:
        line_start = buffer.rfind("\n", 0, end - 1) + 1
        if line_start < floor:
            break
        line = buffer[line_start:end]
        if line[:1] == "#":
            start = line_start
        elif line.strip():
            break
        end = line_start
    return start


def decode_lines(
    chunks: Iterable[str], source: str, on_item: Callable[[Resource], None] | None = None, share_among: int = 0
) -> tuple[list[Resource], dict | None, list[Any]]:
    """Decode text arriving in chunks, handing each item to `on_item` as soon as it is parsed;
    raises NotFast as soon as the layout is not fnrun's. `share_among` > 0: the text is all
    there, parse its items in that many processes once it is cut (`on_item` then gets them all
    at the end)."""
    decoder = FastDecoder(source, on_item, share_among)
    partial = ""
    for chunk in chunks:
        partial = feed_lines(decoder, partial + chunk)
    if partial:
        decoder.feed(partial + "\n")
    return decoder.finish()


def feed_lines(decoder: FastDecoder, text: str) -> str:
    """Feed the whole lines of `text` (the text after the last piece fed); the rest is returned
    to be fed with the next piece."""
    if _ODD_BREAKS.search(text):
        raise NotFast
    cut = text.rfind("\n") + 1
    if cut:
        decoder.feed(text[:cut])
    return text[cut:]
