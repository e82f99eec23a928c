"""ResourceList on the wire: encode what functions (and `fnrun source`) receive, decode what comes
back. Items travel as text, so their comments reach functions and come back unchanged in bytes
when a function left them alone."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from .. import annotations as ann, workers as forking
from ..errors import InputError
from ..read.package import kustomization, parse_stream
from ..resource import Resource
from ..yamlio import anchors, blanks, fast, roundtrip, text, yaml11
from . import fastlist

API_VERSION = "config.kubernetes.io/v1"
ACCEPTED_API_VERSIONS = ("config.kubernetes.io/v1", "config.kubernetes.io/v1beta1", "config.kubernetes.io/v1alpha1")


@dataclass
class Decoded:
    items: list[Resource]
    function_config: dict | None = None
    results: list[Any] = field(default_factory=list)
    kind: str = "ResourceList"  # ResourceList | List | stream
    odd: list[tuple[str | None, str]] = field(default_factory=list)  # items read leniently (other_documents only): (path, warning)


HEADER = f"apiVersion: {API_VERSION}\nkind: ResourceList\n"


def encode(items: list[Resource], function_config: Resource | dict | None = None, workers: int | None = None) -> str:
    """A config.kubernetes.io/v1 ResourceList with each item's own text (comments included);
    `workers` as `encode_items` takes it."""
    parts = [HEADER, "items:\n" if items else "items: []\n", encode_items(items, workers=workers)]
    if function_config is not None:
        config_text = function_config.text if isinstance(function_config, Resource) else fast.dump(function_config)
        parts.append("functionConfig:\n")
        parts.extend("  " + line if line.strip() else line for line in config_text.splitlines(keepends=True))
        if not parts[-1].endswith("\n"):
            parts.append("\n")
    return "".join(parts)


def encode_items(items: list[Resource], used: set[str] | None = None, workers: int | None = None) -> str:
    """The `items:` entries for some resources: what `fnrun source` sends file by file. Each is
    YAML the pure-Python parsers take, meaning what fnrun read: no line ending in a tab
    (yamlio.blanks), no plain scalar that YAML 1.1 reads otherwise (yamlio.yaml11), no anchor name
    an earlier item defines (yamlio.anchors; `used` holds those of items sent before these, and
    gets these items' own). Megabytes of items are encoded on every core, each item on its own;
    the few whose anchors clash with an earlier one's are encoded again here, in order. `workers`:
    FNRUN_WORKERS as the edge read it (None: the cores decide)."""
    used = set() if used is None else used
    sizes = [item.size for item in items]

    def share(start: int, end: int) -> list[tuple[str, set[str]]]:
        return [_encoded(item, frozenset()) for item in items[start:end]]

    parts = []
    shares = forking.fork_map(share, sizes, forking.count(sum(sizes), forking.MIN_BYTES_TO_SHARE, workers))
    for item, (encoded, names) in zip(items, (done for part in shares for done in part)):
        if names & used:
            encoded, names = _encoded(item, used)
        used |= names
        parts.append(encoded)
    return "".join(parts)


def _encoded(item: Resource, used: set[str] | frozenset[str]) -> tuple[str, set[str]]:
    """One item's entry, with anchor names `used` does not hold, and the names it defines."""
    sent, names = anchors.apart(yaml11.quoted(blanks.parseable(item.text)), used)
    return text.indent_item(_noted(item, sent)), names


def _noted(item: Resource, sent: str) -> str:
    """The text sent for an item; where it differs from the item's own text, with the document as
    the user wrote it in fnrun's layout note, so a sink with no original to compare with (`fnrun
    source DIR | fnrun sink NEW`) still writes the user's bytes."""
    if sent is item.text or item.body is None or ann.ORIGINAL in ann.annotations_of(item.data):
        return sent
    try:
        node = fast.compose(sent, "item")
    except InputError:
        return sent
    return text.stamp(sent, node, [(ann.ORIGINAL, text.quote(item.body))]) or sent


def decode(content: str, source: str, workers: int | None = None) -> Decoded:
    """Items of a ResourceList (v1, v1beta1, v1alpha1), a `kind: List`, or a plain stream. A big
    list in fnrun's own layout (a function's output over thousands of resources) is parsed on
    every core (or by `workers` processes: FNRUN_WORKERS as the edge read it)."""
    return decode_stream([content], source, share_among=forking.count(len(content), forking.MIN_BYTES_TO_SHARE, workers))


class ItemSink(Protocol):
    """Receives items as `decode_stream` decodes them (a `writeback.StreamWriter`)."""

    def add(self, item: Resource) -> None: ...

    def reset(self) -> None: ...


def decode_stream(chunks: Iterable[str], source: str, sink: ItemSink | None = None, other_documents: bool = False,
                  share_among: int = 1) -> Decoded:
    """`decode` for text arriving in chunks (a pipe): a list in fnrun's own layout is decoded item
    by item as it arrives, each item handed to `sink` at once; anything else is decoded once all
    of it is there (the sink is then reset and given every item).

    other_documents: also accept list items that are not resources but carry a path annotation, the
    other documents of a package file, as `kpt fn source` prints them (for `fnrun sink`).
    share_among > 1: the text is all there; fnrun's layout is cut into items first and parsed by
    that many processes (orchestrator.workers)."""
    chunks = iter(chunks)
    seen: list[str] = []

    def remember() -> Iterator[str]:
        for chunk in chunks:
            seen.append(chunk)
            yield chunk

    try:
        items, config, results = fastlist.decode_lines(remember(), source, sink.add if sink else None,
                                                       share_among if share_among > 1 else 0)
        return Decoded(items, config, results)
    except fastlist.NotFast:
        pass
    if sink is not None:
        sink.reset()
    decoded = decode_whole("".join(seen) + "".join(chunks), source, other_documents)
    if sink is not None:
        for item in decoded.items:
            sink.add(item)
    return decoded


def decode_whole(content: str, source: str, other_documents: bool = False) -> Decoded:
    content = content.replace("\r\n", "\n")
    if content and not content.endswith("\n"):
        content += "\n"
    segments = [s for s in text.split_documents(content) if not s.separator]
    documents = [s for s in segments if fast.parse(s.text, source, s.start_line)[1] is not None] if len(segments) > 1 else segments
    if len(documents) == 1:
        segment = documents[0]
        node, data, odd = _parse_list(segment, source, other_documents)
        if isinstance(data, dict) and node is not None and _is_list(data, node, source, segment.start_line):
            decoded = _decode_list(segment.text, node, data, source, segment.start_line, other_documents)
            if odd is not None:
                decoded.odd = [(item.path, _verbatim(item, odd, source)) for item in decoded.items if _odd(item.text, source)]
            if other_documents:
                for item in decoded.items:
                    _unwrap_sequence(item)
            return decoded
        if odd is not None:
            raise odd
        if data is None:
            return Decoded([], kind="stream")
    items = parse_stream(content, source)
    for item in items:
        _strip_if_stamped(item)
    return Decoded(items, kind="stream")


def _parse_list(segment: text.Segment, source: str, lenient: bool) -> tuple[Node | None, Any, fast.OddDocument | None]:
    """The document's node and value. With `lenient` (a list for `fnrun sink`, which writes items
    as their own text), a duplicate key or an application tag in an item (`kpt fn source` lists odd
    files verbatim) is read leniently and returned as the third value, for the caller to judge."""
    try:
        return (*fast.parse(segment.text, source, segment.start_line), None)
    except fast.OddDocument as odd:
        if not lenient:
            raise
        return fast.compose(segment.text, source), odd.data, odd


_WRAPPED = "bareSeqNodeWrappingKey"  # kyaml's key around a document that is a bare sequence


def _unwrap_sequence(item: Resource) -> None:
    """A file whose document is a sequence comes from `kpt fn source` wrapped in a mapping under
    kyaml's `bareSeqNodeWrappingKey`; its file gets the sequence back, as `kpt fn sink` writes it."""
    data = item.data
    if _WRAPPED not in data or ann.is_resource(data):
        return
    body = item.body if item.body is not None else _own_text(item, "item")
    if body is None or not body.startswith(_WRAPPED + ":\n"):
        return
    rest = body[len(_WRAPPED) + 2 :]
    if rest.startswith("  "):
        rest = "".join(line[2:] if line.startswith("  ") else line for line in rest.splitlines(keepends=True))
    try:
        same = roundtrip.same(fast.load(rest, "item"), data[_WRAPPED])
    except InputError:
        same = False
    if same:
        item._body = rest


def _odd(document: str, source: str) -> fast.OddDocument | None:
    """Why a document cannot be read faithfully, or None when it can."""
    try:
        fast.parse(document, source)
    except fast.OddDocument as odd:
        return odd
    return None


def _verbatim(item: Resource, odd: fast.OddDocument, source: str) -> str:
    """Make an item read leniently go into its file as its own text, never re-rendered from its
    guessed value: its body is its text without the path/index annotations, and where those are
    all its metadata (kpt adds them to any document), without the metadata too. When its text
    does not allow that, or it names no file, the list's own error `odd` is raised. Returns the
    warning line, naming the file and the line there."""
    body = None if item.path is None else _own_text(item, source)
    if body is None:
        raise odd
    item._body = body
    where = _odd(item._body, source) or _odd(item.text, source) or odd
    return f"{item.path}:{where.line}: {where.problem} (an item of {source}); written as its own text"


def _own_text(item: Resource, source: str) -> str | None:
    """The item's text without the path/index annotations, and without its metadata where they
    are all of it (kpt adds them to any document); None when its layout does not allow that."""
    lines = item.text.splitlines(keepends=True)
    node = fast.compose(item.text, source)
    doomed = text.strip_lines(lines, node, ann.STRIPPED_KEYS, note=ann.ORIGINAL)
    if doomed is None:
        doomed = _whole_metadata(lines, node)
    return None if doomed is None else text.delete_lines(item.text, doomed)


def _whole_metadata(lines: list[str], node: Node | None) -> list[int] | None:
    """The lines of a block `metadata:` that holds nothing but fnrun's and kyaml's annotations, one
    per line (what `kpt fn source` adds to a document without metadata), or None."""
    meta = _field_node(node, "metadata")
    annotations = _field_node(meta, "annotations")
    if not isinstance(meta, MappingNode) or len(meta.value) != 1 or not isinstance(annotations, MappingNode) or annotations.flow_style:
        return None
    if not all(isinstance(k, ScalarNode) and k.value in ann.STRIPPED_KEYS and k.start_mark.line == v.end_mark.line for k, v in annotations.value):
        return None
    key = next(k for k, v in node.value if v is meta)  # type: ignore[union-attr]
    if key.start_mark.column != 0:
        return None
    end = annotations.end_mark.line + (1 if annotations.end_mark.column else 0)
    return list(range(key.start_mark.line, end))


def _is_list(data: dict, node: Node | None, source: str, line_offset: int) -> bool:
    kind = data.get("kind")
    if kind == "ResourceList":
        if data.get("apiVersion") not in ACCEPTED_API_VERSIONS:
            where = _where(source, _field_node(node, "apiVersion") or node, line_offset)
            raise InputError(f"{where}: ResourceList with unsupported apiVersion {data.get('apiVersion')!r} (accepted: {', '.join(ACCEPTED_API_VERSIONS)})")
        return True
    return kind == "List" or (isinstance(kind, str) and kind.endswith("List") and "items" in data)


def _where(source: str, node: Node | None, line_offset: int) -> str:
    return source if node is None else f"{source}:{node.start_mark.line + 1 + line_offset}"


def _field_node(node: Node | None, name: str) -> Node | None:
    if isinstance(node, MappingNode):
        for key, value in node.value:
            if isinstance(key, ScalarNode) and key.value == name:
                return value
    return None


def _decode_list(content: str, node: Node, data: dict, source: str, line_offset: int, other_documents: bool = False) -> Decoded:
    kind = data.get("kind")
    items_data = data.get("items")
    if items_data is None:
        items_data = []
    if not isinstance(items_data, list):
        raise InputError(f"{_where(source, _field_node(node, 'items'), line_offset)}: {kind} items must be a list")
    config = data.get("functionConfig")
    if config is not None and not isinstance(config, dict):
        raise InputError(f"{_where(source, _field_node(node, 'functionConfig'), line_offset)}: functionConfig must be a mapping")
    results = data.get("results") or []
    if not isinstance(results, list):
        raise InputError(f"{_where(source, _field_node(node, 'results'), line_offset)}: results must be a list")
    items_node = _field_node(node, "items")
    block_items = items_node if isinstance(items_node, SequenceNode) and not items_node.flow_style else None
    top = next((k.start_mark.line + 1 for k, v in node.value if v is items_node), 0) if isinstance(node, MappingNode) else 0
    lines = content.splitlines(keepends=True)
    resources = []
    for position, item in enumerate(items_data):
        if not ann.is_resource(item) and not kustomization(item, ann.get_path(item)) and not (other_documents and isinstance(item, dict) and ann.get_path(item) is not None):
            what = "a mapping without apiVersion or kind" if isinstance(item, dict) else f"a {_type_name(item)}"
            item_node = items_node.value[position] if isinstance(items_node, SequenceNode) else None
            raise InputError(f"{_where(source, item_node, line_offset)}: items[{position}] is {what}, not a resource")
        resources.append(_item(lines, block_items, position, item, top))
    return Decoded(resources, config, results, kind=str(kind))


def _type_name(value: Any) -> str:
    if isinstance(value, list):
        return "list"
    return "null" if value is None else "scalar"


def _item(lines: list[str], seq: SequenceNode | None, position: int, data: dict, top: int) -> Resource:
    """Cut item `position` out of the list's text: from its head comments above its dash (not
    above line `top`, the one after `items:`) to the next item's head comments. A flow-style item
    is cut out exactly; its annotations cannot be stripped as lines, so it has no body."""
    if seq is None:
        return Resource(data)
    node = seq.value[position]
    if not isinstance(node, MappingNode):
        return Resource(data)
    if node.flow_style:
        return Resource(data, _span(lines, node) + "\n", None)
    column = seq.start_mark.column
    dash = _dash_line(lines, node, column)
    if dash is None:
        return Resource(data)
    floor = top if position == 0 else seq.value[position - 1].start_mark.line + 1
    start = text.item_head(lines, dash, column, floor)
    if position + 1 < len(seq.value):
        next_dash = _dash_line(lines, seq.value[position + 1], column)
        if next_dash is None:
            return Resource(data)
        end = text.item_head(lines, next_dash, column, dash + 1)
    else:
        end = seq.end_mark.line + (1 if seq.end_mark.column else 0)
        end = max(end, node.end_mark.line + (1 if node.end_mark.column else 0))
    item_text = text.dedent_item(lines[start:end], dash - start, column, node.start_mark.column)
    doomed = text.strip_lines(lines, node, ann.STRIPPED_KEYS, start, note=ann.ORIGINAL)
    body = None if doomed is None else text.delete_lines(item_text, doomed)
    return Resource(data, item_text, body)


def _span(lines: list[str], node: Node) -> str:
    """The exact source text of a node."""
    first, last = node.start_mark, node.end_mark
    if first.line == last.line:
        return lines[first.line][first.column : last.column]
    return "".join([lines[first.line][first.column :], *lines[first.line + 1 : last.line], lines[last.line][: last.column]])


def _dash_line(lines: list[str], node: Node, dash_column: int) -> int | None:
    for number in range(node.start_mark.line, -1, -1):
        line = lines[number]
        if line[dash_column : dash_column + 1] == "-" and not line[:dash_column].strip():
            return number
    return None


def _strip_if_stamped(item: Resource) -> None:
    """Stream input carries fnrun's annotations in its text: compute the body without them."""
    if not any(k in ann.annotations_of(item.data) for k in ann.STRIPPED_KEYS):
        return
    node, _ = fast.parse(item.text, "stream")
    doomed = text.strip_lines(item.text.splitlines(keepends=True), node, ann.STRIPPED_KEYS, note=ann.ORIGINAL)
    item._body = None if doomed is None else text.delete_lines(item.text, doomed)
