"""Read and write the function's input: a ResourceList, a `kind: List`, or a bare multi-document stream.

Round-trip YAML (ruamel) keeps comments, key order and quoting; output keeps the input's shape (the
spec asks for it) and its indentation style. Only the round-trip API common to ruamel.yaml 0.17.21
(Debian bookworm, inside the images) and 0.18+ (the host) is used.
"""

from __future__ import annotations

import io
import re
from collections import Counter
from typing import Any, Iterator

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import YAMLError

from .config import Error
from .resource import Resource
from .results import Field, Result, Severity

RESOURCE_LIST_VERSIONS = ("config.kubernetes.io/v1", "config.kubernetes.io/v1beta1", "config.kubernetes.io/v1alpha1")

_KEY_LINE = re.compile(r"^([ -]*)[^\s#-][^:]*:\s*(?:#.*)?$")  # a key opening a block
_ITEM_LINE = re.compile(r"^( *)- ")
_CONTENT_LINE = re.compile(r"^( *)[^\s#]")


class InputError(Error):
    """stdin is not YAML, or not one of the accepted shapes."""


def guess_indent(text: str) -> tuple[int, int]:
    """(mapping indent, dash offset) by majority over the block collections below the top level.

    The top level is skipped: the orchestrator's own `items:` line says nothing about the resources'
    style, which is what ends up in files."""
    mapping: Counter[int] = Counter()
    offset: Counter[int] = Counter()
    lines = [line for line in text.splitlines() if _CONTENT_LINE.match(line)]
    for line, nxt in zip(lines, lines[1:]):
        key = _KEY_LINE.match(line)
        if key is None:
            continue
        col = len(key.group(1))
        if col == 0:
            continue
        item = _ITEM_LINE.match(nxt)
        if item is not None:
            offset[len(item.group(1)) - col] += 1
        else:
            deeper = len(_CONTENT_LINE.match(nxt).group(1)) - col
            if deeper > 0:
                mapping[deeper] += 1
    indent = mapping.most_common(1)[0][0] if mapping else 2
    dash = offset.most_common(1)[0][0] if offset else 0
    return indent, max(0, dash)


def new_yaml(indent: int = 2, offset: int = 0) -> YAML:
    yaml = YAML(typ="rt")
    yaml.preserve_quotes = True
    yaml.width = 1 << 16  # never fold long strings: a function must not reflow what it did not edit
    yaml.indent(mapping=indent, sequence=indent + offset if offset else indent, offset=offset)
    return yaml


class ResourceList:
    """The items (Resource wrappers over the parsed nodes), the functionConfig, and results to report.

    Edit items in place, or add/remove entries of `items`; `dump()` writes the list back in the shape
    it was read in."""

    def __init__(self, items: list[Resource], function_config: Resource | None = None,
                 *, shape: str = "ResourceList", root: CommentedMap | None = None,
                 indent: tuple[int, int] = (2, 0)) -> None:
        self.items = items
        self.function_config = function_config
        self.results: list[Result] = []
        self.shape = shape  # ResourceList | List | stream
        self._root = root
        self._indent = indent

    # reading ----------------------------------------------------------------------------------
    @classmethod
    def parse(cls, text: str) -> ResourceList:
        indent = guess_indent(text)
        try:
            docs = [d for d in new_yaml().load_all(text) if d is not None]
        except YAMLError as err:
            raise InputError(f"input is not valid YAML: {' '.join(str(err).split())}") from None
        if len(docs) == 1 and isinstance(docs[0], dict) and "items" in docs[0] and str(docs[0].get("kind", "")).endswith("List"):
            root = docs[0]
            items = root.get("items") or CommentedSeq()
            if not isinstance(items, list):
                raise InputError("input: `items` is not a list")
            fc = root.get("functionConfig")
            shape = "ResourceList" if root.get("kind") == "ResourceList" else "List"
            return cls(_wrap(items), Resource(fc) if isinstance(fc, dict) else None,
                       shape=shape, root=root, indent=indent)
        return cls(_wrap(docs), shape="stream", indent=indent)

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
    def dump(self) -> str:
        """The output document(s); results go into a ResourceList's `results` only (a List or a
        stream has nowhere to put them: the runner prints them on stderr)."""
        out = io.StringIO()
        yaml = new_yaml(*self._indent)
        nodes = [r.data for r in self.items]
        if self.shape == "stream":
            if nodes:
                yaml.dump_all(nodes, out)
            return out.getvalue()
        root = self._root
        if root is None:  # built in code, not parsed
            root = CommentedMap(apiVersion=RESOURCE_LIST_VERSIONS[0], kind="ResourceList", items=[])
            if self.function_config is not None:
                root["functionConfig"] = self.function_config.data
        if [id(n) for n in root.get("items") or []] != [id(n) for n in nodes]:
            root["items"] = CommentedSeq(nodes)
        if self.results and self.shape == "ResourceList":
            previous = root.get("results") or []
            root["results"] = CommentedSeq([*previous, *(r.to_yaml() for r in self.results)])
        yaml.dump(root, out)
        return out.getvalue()


def _wrap(nodes: list[Any]) -> list[Resource]:
    for i, node in enumerate(nodes):
        if not isinstance(node, dict):
            raise InputError(f"input: item {i} is not a mapping")
    return [Resource(node) for node in nodes]
