"""Read and write the function's input: a ResourceList, a `kind: List`, or a bare multi-document stream.

Round-trip YAML (ruamel) keeps comments, key order and quoting; output keeps the input's shape (the
spec asks for it) and its layout: each item is written back in the indentation style it was read in,
at the columns it was read at (see `layout`). Only the round-trip API common to ruamel.yaml 0.17.21
(Debian bookworm, inside the images) and 0.18+ (the host) is used.
"""

from __future__ import annotations

import functools
import io
from collections import Counter
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from . import layout
from .config import Error
from .layout import Style
from .resource import Resource
from .results import Field, Result, Severity

if TYPE_CHECKING:  # ruamel is imported where text is read or written: a host that hands over
    from ruamel.yaml import YAML  # parsed data (runner.transport) never needs it
    from ruamel.yaml.comments import CommentedMap

RESOURCE_LIST_VERSIONS = ("config.kubernetes.io/v1", "config.kubernetes.io/v1beta1", "config.kubernetes.io/v1alpha1")


class InputError(Error):
    """stdin is not YAML, or not one of the accepted shapes."""


@functools.cache
def new_yaml(style: Style = Style()) -> YAML:
    """A round-trip YAML instance writing `style` (one per style, reused)."""
    from ruamel.yaml import YAML

    yaml = YAML(typ="rt")
    yaml.preserve_quotes = True
    yaml.width = 1 << 16  # never fold long strings: a function must not reflow what it did not edit
    yaml.indent(mapping=style.mapping, sequence=style.mapping + style.offset if style.offset else style.mapping,
                offset=style.offset)
    return yaml


def dump_yaml(node: Any, style: Style = Style()) -> str:
    out = io.StringIO()
    new_yaml(style).dump(node, out)
    return out.getvalue()


def _is_list(node: Any) -> bool:
    """A ResourceList (its items may be absent) or another List kind with items."""
    kind = str(node.get("kind", "")) if isinstance(node, dict) else ""
    return kind == "ResourceList" or (kind.endswith("List") and "items" in node)


class ResourceList:
    """The items (Resource wrappers over the parsed nodes), the functionConfig, and results to report.

    Edit items in place, or add/remove entries of `items`; `dump()` writes the list back in the shape
    it was read in."""

    def __init__(self, items: list[Resource], function_config: Resource | None = None,
                 *, shape: str = "ResourceList") -> None:
        self.items = items
        self.function_config = function_config
        self.results: list[Result] = []
        self.shape = shape  # ResourceList | List | stream
        self._root: CommentedMap | None = None  # the list document as read
        self._root_style = Style()
        self._columns: tuple[int, int] | None = (0, 2)  # items' dash and content columns; None: inline
        # id(item node) -> (the node, kept alive so its id is not reused; its style; blank lines above)
        self._read: dict[int, tuple[Any, Style, int]] = {}
        self._prior_results: list[Any] = []  # results that came in (from earlier functions)

    # reading ----------------------------------------------------------------------------------
    @classmethod
    def parse(cls, text: str) -> ResourceList:
        split = layout.split_items(text)
        parsed = cls._parse_split(split) if split is not None else None
        return parsed if parsed is not None else cls._parse_whole(text)

    @classmethod
    def _parse_split(cls, split: layout.Split) -> ResourceList | None:
        """Items one by one, each in its own style; None to fall back to reading the whole text."""
        from ruamel.yaml.error import YAMLError

        try:
            root = new_yaml().load(split.root)
            nodes = [new_yaml().load(item) for item in split.items]
        except YAMLError:
            return None
        if not _is_list(root):
            return None
        resource_list = cls._from_root(root, nodes, guess=layout.guess_style(split.root))
        resource_list._columns = (split.dash, split.content)
        resource_list._read = {id(n): (n, layout.guess_style(t), blank)
                               for n, t, blank in zip(nodes, split.items, split.blank_lines)}
        return resource_list

    @classmethod
    def _parse_whole(cls, text: str) -> ResourceList:
        from ruamel.yaml.error import YAMLError

        style = layout.guess_style(text)
        try:
            docs = [d for d in new_yaml().load_all(text) if d is not None]
        except YAMLError as err:
            raise InputError(f"input is not valid YAML: {' '.join(str(err).split())}") from None
        if len(docs) == 1 and _is_list(docs[0]):
            resource_list = cls._from_root(docs[0], docs[0].get("items"), guess=style)
            resource_list._columns = None
        else:
            resource_list = cls(_wrap(docs), shape="stream")
        resource_list._read = {id(r.data): (r.data, style, 0) for r in resource_list.items}
        return resource_list

    @classmethod
    def _from_root(cls, root: CommentedMap, items: Any, guess: Style) -> ResourceList:
        if items is None:
            items = []
        if not isinstance(items, list):
            raise InputError("input: `items` is not a list")
        fc = root.get("functionConfig")
        shape = "ResourceList" if root.get("kind") == "ResourceList" else "List"
        resource_list = cls(_wrap(items), Resource(fc) if isinstance(fc, dict) else None, shape=shape)
        resource_list._root = root
        resource_list._root_style = guess
        resource_list._prior_results = list(root.get("results") or [])
        return resource_list

    # results ----------------------------------------------------------------------------------
    def report(self, message: str, resource: Resource | None = None, *, severity: Severity = "error",
               field: Field | str | None = None, tags: dict[str, str] | None = None) -> Result:
        """Add a result; `field` may be a bare path."""
        if isinstance(field, str):
            field = Field(field)
        result = Result(message, severity, resource, field, tags or {})
        self.results.append(result)
        return result

    def error(self, message: str, resource: Resource | None = None, **kw: Any) -> Result:
        return self.report(message, resource, severity="error", **kw)

    def warning(self, message: str, resource: Resource | None = None, **kw: Any) -> Result:
        return self.report(message, resource, severity="warning", **kw)

    def info(self, message: str, resource: Resource | None = None, **kw: Any) -> Result:
        return self.report(message, resource, severity="info", **kw)

    @property
    def has_errors(self) -> bool:
        return any(r.severity == "error" for r in self.results)

    # iterating --------------------------------------------------------------------------------
    def workloads(self) -> Iterator[Resource]:
        return (r for r in self.items if r.is_workload)

    # writing ----------------------------------------------------------------------------------
    def _layout(self, node: Any) -> tuple[Style, int]:
        """The style an item was read in and the blank lines above it; new items take the most
        common style."""
        if id(node) in self._read:
            return self._read[id(node)][1:]
        common = Counter(style for _, style, _ in self._read.values()).most_common(1)
        return (common[0][0] if common else Style()), 0

    def _dump_item(self, node: Any) -> str:
        style, _ = self._layout(node)
        return dump_yaml(node, style)

    def dump(self) -> str:
        """The output document(s); results go into a ResourceList's `results` only (a List or a
        stream has nowhere to put them: the runner prints them on stderr)."""
        return "".join(self.dump_parts())

    def dump_parts(self) -> Iterator[str]:
        """`dump` in pieces, each item's as soon as it is dumped: a runner that writes them as
        they come lets its reader (fnrun) parse the first items while the last are dumped."""
        from ruamel.yaml.comments import CommentedMap, CommentedSeq

        nodes = [r.data for r in self.items]
        if self.shape == "stream":
            for number, node in enumerate(nodes):
                yield ("---\n" if number else "") + self._dump_item(node)
            return
        root = self._root
        if root is None:  # built in code, not parsed
            root = CommentedMap(apiVersion=RESOURCE_LIST_VERSIONS[0], kind="ResourceList", items=[])
            if self.function_config is not None:
                root["functionConfig"] = self.function_config.data
        if self.results and self.shape == "ResourceList":
            root["results"] = CommentedSeq([*self._prior_results, *(r.to_yaml() for r in self.results)])
        if self._columns is None:  # read as one document: write it as one
            if [id(n) for n in root.get("items") or []] != [id(n) for n in nodes]:
                root["items"] = CommentedSeq(nodes)
            yield dump_yaml(root, self._root_style)
            return
        root["items"] = CommentedSeq()
        dash, content = self._columns
        items = ("\n" * self._layout(n)[1] + layout.as_item(self._dump_item(n), dash, content) for n in nodes)
        yield from layout.join_items(dump_yaml(root, self._root_style), items)


def _wrap(nodes: list[Any]) -> list[Resource]:
    for i, node in enumerate(nodes):
        if not isinstance(node, dict):
            raise InputError(f"input: item {i} is not a mapping")
    return [Resource(node) for node in nodes]
