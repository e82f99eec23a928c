"""libyaml-backed parsing: the fast path every document takes, with errors that name file and line."""

from __future__ import annotations

import re
import sys
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from ..errors import InputError
from . import nesting

_Base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_MERGE_TAG = "tag:yaml.org,2002:merge"

# Limits on what a document may make fnrun do. Packages and function output are untrusted input:
# - MAX_DEPTH: nesting of collections. libyaml's composer recurses in C and crashes the process
#   somewhere between 20,000 and 100,000 levels; every walker after it (construction, comparison,
#   ruamel's round trip, JSON) recurses in Python. Real resources nest a few dozen levels (CRD
#   schemas reach ~60), so 500 leaves room while keeping every walker far from its limits.
# - MAX_ALIAS_NODES: nodes that aliases add when the document is walked as a tree. Construction
#   shares an anchored value, but comparing, encoding or dumping it expands every alias: a
#   "billion laughs" document of 9 anchors with 9 aliases each is 9^9 nodes. A million extra
#   nodes is far beyond any hand-written anchor use and is counted in milliseconds.
MAX_DEPTH = 500
MAX_ALIAS_NODES = 1_000_000
_PRESCAN_BOUND = 10_000  # below this upper bound on depth, libyaml's composer is safe to call

_RECOUNT_LIMIT = 256 * 1024  # a library's own refusal is recounted up to this size (~1 s)

# Construction recurses about two frames per nesting level, ruamel's round trip about four.
sys.setrecursionlimit(max(sys.getrecursionlimit(), 8 * MAX_DEPTH + 2000))

# libyaml 0.2.6 refuses flow nesting past 1,000 levels in its scanner, which reads up to 1,024
# characters ahead of the parser: a line of brackets then fails in libyaml's words before fnrun's
# event count reaches MAX_DEPTH. Where PyYAML lets its limit be set, put it above anything that
# look-ahead can reach past MAX_DEPTH, so fnrun's own check speaks first; `_own_limits` covers
# versions that do not.
_set_nest_limit = getattr(getattr(yaml, "_yaml", None), "_set_max_nest_level", None)
if callable(_set_nest_limit):
    _set_nest_limit(MAX_DEPTH + 10 * 1024)


class _DuplicateKey(yaml.MarkedYAMLError):
    pass


class _UnknownTag(yaml.MarkedYAMLError):
    pass


class OddDocument(InputError):
    """A document that parses but whose value fnrun cannot hold faithfully: a duplicate mapping key
    (which of the values counts is a guess) or an application tag (`!!python/name:...`, which no
    safe loader constructs). The package reader leaves such a document as it is; everywhere else
    it is an error like any other. `data` is the value read leniently (the last of duplicate keys
    wins, as kpt's reader has it; a tagged node is read as if untagged), for telling whether the
    document is a resource and which function would receive it; `line` is 1-based."""

    def __init__(self, message: str, line: int, problem: str, data: Any) -> None:
        super().__init__(message)
        self.line = line
        self.problem = problem
        self.data = data


class _TooComplex(yaml.MarkedYAMLError):
    """Nesting or alias expansion over the limits above (a one-line InputError like any other)."""


_STR = "tag:yaml.org,2002:str"
_BOOL = "tag:yaml.org,2002:bool"
_INT = "tag:yaml.org,2002:int"
_FLOAT = "tag:yaml.org,2002:float"
_NULL = "tag:yaml.org,2002:null"

# The YAML 1.2 core schema, as ruamel, kpt (yaml.v3) and kustomize resolve plain scalars: `yes`,
# `on` and `2024-01-01` are strings, `012` is twelve. PyYAML's default is YAML 1.1; mixing the two
# would make fnrun rewrite a user's `yes` as `true`.
_CORE = [
    (_BOOL, re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), "tTfF"),
    (_INT, re.compile(r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$"), "-+0123456789"),
    (
        _FLOAT,
        re.compile(r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"),
        "-+.0123456789",
    ),
    (_NULL, re.compile(r"^(?:~|null|Null|NULL|)$"), ["~", "n", "N", ""]),
    (_MERGE_TAG, re.compile(r"^<<$"), "<"),
]
_MAP = "tag:yaml.org,2002:map"
_SEQ = "tag:yaml.org,2002:seq"
_plain_tags: dict[str, str] = {}  # plain scalar text -> its core-schema tag
# Bounds for that memo in a process that reads for long (a server, a test suite): short texts
# only (names, numbers, booleans repeat; a long text is a string and seldom seen twice).
_MEMO_TEXT = 64
_MEMO_ENTRIES = 100_000


class StrictLoader(_Base):  # type: ignore[misc, valid-type]
    """libyaml's safe loader with the YAML 1.2 core schema, made fast where PyYAML is slow (tag
    resolution and construction run in Python), and strict: duplicate mapping keys are errors."""

    yaml_implicit_resolvers: dict = {}
    _strict = True  # False: read an odd document leniently (OddDocument.data)

    def resolve(self, kind: type, value: str, implicit: tuple[bool, bool]) -> str:
        """Called by libyaml's composer for every node: quoted scalars are strings, plain ones are
        looked up in a cache, collections take the default tags (no path resolvers here)."""
        if kind is ScalarNode:
            if not implicit[0]:
                return _STR
            tag = _plain_tags.get(value)
            if tag is None:
                tag = super().resolve(kind, value, implicit)
                if len(value) <= _MEMO_TEXT and len(_plain_tags) < _MEMO_ENTRIES:
                    _plain_tags[value] = tag
            return tag
        return _SEQ if kind is SequenceNode else _MAP

    def descend_resolver(self, current_node: Any, current_index: Any) -> None:
        """No path resolvers here; libyaml's composer calls this for every node."""

    def ascend_resolver(self) -> None:
        """No path resolvers here; libyaml's composer calls this for every node."""

    def construct_document(self, node: Node) -> Any:
        self._depth = 0
        self._alias_nodes = 0
        self._sizes: dict[int, int] = {}
        return self._value(node, {})

    def _value(self, node: Node, seen: dict[int, Any]) -> Any:
        """Plain value of a node; the common tags inline, the rest through PyYAML's constructors.
        `seen` maps nodes already built to their values, so an alias yields the same object (and
        counts the nodes it stands for against MAX_ALIAS_NODES)."""
        tag = node.tag
        if tag == _STR:
            return node.value
        if tag == _MAP and isinstance(node, MappingNode):
            if id(node) in seen:
                return self._alias(node, seen)
            out: dict = {}
            seen[id(node)] = out
            value = self._value
            self._enter(node)
            for key_node, value_node in node.value:
                key_tag = key_node.tag
                if key_tag == _STR:
                    key = key_node.value
                elif key_tag == _MERGE_TAG:
                    merged = self._merged(node, out, seen)
                    self._depth -= 1
                    return merged
                else:
                    key = self._key(key_node, seen)
                if key in out and self._strict:
                    raise _DuplicateKey(None, None, f"duplicate key {key_node.value!r}", key_node.start_mark)
                out[key] = value_node.value if value_node.tag == _STR else value(value_node, seen)
            self._depth -= 1
            return out
        if tag == _SEQ and isinstance(node, SequenceNode):
            if id(node) in seen:
                return self._alias(node, seen)
            items: list = []
            seen[id(node)] = items
            self._enter(node)
            items.extend(child.value if child.tag == _STR else self._value(child, seen) for child in node.value)
            self._depth -= 1
            return items
        if isinstance(node, ScalarNode) and tag in _SCALARS:
            return _SCALARS[tag](node.value)
        return self.construct_object(node, deep=True)

    def _untagged(self, node: Node) -> Any:
        """A node with a tag no safe loader constructs: an error, or when reading leniently, the
        value it would have untagged (a scalar's text, a list, a mapping)."""
        if self._strict:
            shown = "!!" + node.tag[len("tag:yaml.org,2002:"):] if node.tag.startswith("tag:yaml.org,2002:") else node.tag
            raise _UnknownTag(None, None, f"application tag {shown} (no plain YAML reader constructs it)", node.start_mark)
        if isinstance(node, MappingNode):
            return {self._key(k, {}) if k.tag != _STR else k.value: self._value(v, {}) for k, v in node.value}
        if isinstance(node, SequenceNode):
            return [self._value(child, {}) for child in node.value]
        return node.value

    def _enter(self, node: Node) -> None:
        self._depth += 1
        if self._depth > MAX_DEPTH:
            raise _TooComplex(None, None, f"collections nested deeper than {MAX_DEPTH} levels", node.start_mark)

    def _alias(self, node: Node, seen: dict[int, Any]) -> Any:
        """An alias (or a shared anchor): the value already built, with the nodes it repeats counted."""
        self._alias_nodes += _size(node, self._sizes)
        if self._alias_nodes > MAX_ALIAS_NODES:
            raise _TooComplex(None, None, f"aliases expand to more than {MAX_ALIAS_NODES:,} nodes (an alias bomb?)", node.start_mark)
        return seen[id(node)]

    def _key(self, node: Node, seen: dict[int, Any]) -> Any:
        key = self._value(node, seen)
        if isinstance(key, (list, dict)):
            raise yaml.constructor.ConstructorError(None, None, "unhashable mapping key", node.start_mark)
        return key

    def _merged(self, node: MappingNode, out: dict, seen: dict[int, Any]) -> dict:
        """A mapping with `<<` merge keys: merged pairs first (earlier merges win over later ones,
        as PyYAML orders them), then the mapping's own keys, which override merged ones and must
        not repeat among themselves."""
        out.clear()
        explicit = [(k, v) for k, v in node.value if k.tag != _MERGE_TAG]
        self.flatten_mapping(node)
        for key_node, value_node in node.value[: len(node.value) - len(explicit)]:
            out[self._key(key_node, seen)] = self._value(value_node, seen)
        own: set = set()
        for key_node, value_node in explicit:
            key = self._key(key_node, seen)
            if key in own and self._strict:
                raise _DuplicateKey(None, None, f"duplicate key {key_node.value!r}", key_node.start_mark)
            own.add(key)
            out[key] = self._value(value_node, seen)
        return out


def _size(root: Node, sizes: dict[int, int]) -> int:
    """Nodes under `root` with every alias expanded, memoized per node; iterative, so a shared
    node is measured once however often it is repeated."""
    stack: list[tuple[Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        if id(node) in sizes:
            continue
        if isinstance(node, ScalarNode):
            sizes[id(node)] = 1
            continue
        children = [child for pair in node.value for child in pair] if isinstance(node, MappingNode) else list(node.value)
        if children_done:
            sizes[id(node)] = 1 + sum(sizes[id(child)] for child in children)
        else:
            stack.append((node, True))
            stack.extend((child, False) for child in children if id(child) not in sizes)
    return sizes[id(root)]


def _prescan(text: str) -> None:
    """Refuse nesting past MAX_DEPTH before libyaml's recursive composer sees it: the events are
    counted only where the text's marks allow nesting that deep (`nesting.bound`)."""
    if nesting.bound(text, _PRESCAN_BOUND) < _PRESCAN_BOUND:
        return
    mark = nesting.first_too_deep(text, StrictLoader, MAX_DEPTH)
    if mark is not None:
        raise _TooComplex(None, None, f"collections nested deeper than {MAX_DEPTH} levels", mark)


def _own_limits(err: yaml.YAMLError, text: str) -> yaml.YAMLError:
    """fnrun's nesting limit in fnrun's words, whichever libyaml is installed. libyaml 0.2.6 and
    later refuse deep flow nesting themselves, and their scanner looks up to 1,024 characters
    ahead, so a line of brackets fails in libyaml's wording before the event count reaches
    MAX_DEPTH. When the parser fails and the text up to the failing line could nest that deep,
    PyYAML's pure-Python parser (no nesting limit, iterative) recounts that prefix: nesting past
    MAX_DEPTH before the failure is what gets reported. Costs nothing on documents that parse;
    the recount (about 4 s/MB) is skipped past _RECOUNT_LIMIT, where the library's words stand."""
    if isinstance(err, (_TooComplex, _DuplicateKey)):
        return err
    mark = getattr(err, "problem_mark", None) or getattr(err, "context_mark", None)
    prefix = text if mark is None else nesting.through_line(text, mark.line)
    if nesting.bound(prefix, _PRESCAN_BOUND) <= MAX_DEPTH or len(prefix) > _RECOUNT_LIMIT:
        return err
    try:
        deep = nesting.first_too_deep(prefix, yaml.SafeLoader, MAX_DEPTH)
    except yaml.YAMLError:  # the prefix ends mid-document, or the same error again
        deep = None
    if deep is None:
        return err
    return _TooComplex(None, None, f"collections nested deeper than {MAX_DEPTH} levels", deep)


def _int(value: str) -> int:
    sign = -1 if value.startswith("-") else 1
    digits = value.lstrip("+-")
    if digits.startswith(("0o", "0x")):
        return sign * int(digits, 0)
    return sign * int(digits, 10)


def _float(value: str) -> float:
    lowered = value.lower()
    if lowered.endswith(".inf"):
        return float("-inf") if lowered.startswith("-") else float("inf")
    if lowered == ".nan":
        return float("nan")
    return float(value)


_SCALARS = {
    _BOOL: lambda value: value in ("true", "True", "TRUE"),
    _INT: _int,
    _FLOAT: _float,
    _NULL: lambda value: None,
}


for _tag, _pattern, _first in _CORE:
    StrictLoader.add_implicit_resolver(_tag, _pattern, _first)
StrictLoader.add_constructor(None, StrictLoader._untagged)


def _where(source: str, err: yaml.YAMLError, line_offset: int) -> str:
    mark = getattr(err, "problem_mark", None) or getattr(err, "context_mark", None)
    if mark is None:
        return source
    return f"{source}:{mark.line + 1 + line_offset}"


def _problem(err: yaml.YAMLError) -> str:
    if isinstance(err, yaml.MarkedYAMLError):
        text = " ".join(p for p in (err.context, err.problem) if p)
        return text or "invalid YAML"
    return str(err).splitlines()[0] if str(err) else "invalid YAML"


def parse(text: str, source: str, line_offset: int = 0) -> tuple[Node | None, Any]:
    """Compose and construct one document: the node (for line/column marks) and its plain value.

    Raises InputError `source:line: problem` on malformed YAML, OddDocument (an InputError) on
    duplicate keys and application tags."""
    loader = StrictLoader(text)
    node = None
    try:
        _prescan(text)
        node = loader.get_single_node()
        data = None if node is None else loader.construct_document(node)
    except (_DuplicateKey, _UnknownTag) as err:
        # both are raised while constructing, so the node was composed, and both carry its mark
        assert node is not None and err.problem_mark is not None
        loader._strict = False
        loader.constructed_objects, loader.recursive_objects = {}, {}  # what the failed pass left
        lenient = loader.construct_document(node)
        where, problem = _where(source, err, line_offset), _problem(err)
        raise OddDocument(f"{where}: {problem}", err.problem_mark.line + 1 + line_offset, problem, lenient) from None
    except yaml.YAMLError as err:
        err = _own_limits(err, text)
        raise InputError(f"{_where(source, err, line_offset)}: {_problem(err)}") from None
    finally:
        loader.dispose()
    return node, data


def compose(text: str, source: str) -> Node | None:
    """The node tree of one document, for its positions, without building its value."""
    loader = StrictLoader(text)
    try:
        return loader.get_single_node()
    except yaml.YAMLError as err:
        err = _own_limits(err, text)
        raise InputError(f"{_where(source, err, 0)}: {_problem(err)}") from None
    finally:
        loader.dispose()


def load(text: str, source: str, line_offset: int = 0) -> Any:
    """The plain value of one YAML document (None for an empty or comment-only one)."""
    return parse(text, source, line_offset)[1]


def load_all(text: str, source: str) -> list[Any]:
    """Every document of a stream, for inputs whose layout does not matter (e.g. function configs)."""
    loader = StrictLoader(text)
    docs = []
    try:
        _prescan(text)
        while loader.check_node():
            node = loader.get_node()
            docs.append(loader.construct_document(node))
    except yaml.YAMLError as err:
        err = _own_limits(err, text)
        raise InputError(f"{_where(source, err, 0)}: {_problem(err)}") from None
    finally:
        loader.dispose()
    return docs


_Dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def dump(data: Any) -> str:
    """Plain block YAML, for resources that have no text of their own yet."""
    text = yaml.dump(data, Dumper=_Dumper, default_flow_style=False, sort_keys=False, allow_unicode=True, width=4096)
    return without_end_marker(text)


def without_end_marker(text: str) -> str:
    """A dumped document without the `...` a YAML library ends it with after a keep-chomped block
    scalar (`|+`): the document's text goes into a file or a ResourceList item, where the marker
    would end the whole stream; its trailing blank lines are the scalar's either way."""
    return text[:-4] if text.endswith("\n...\n") else text


def decode(raw: bytes, source: str) -> str:
    """UTF-8 text of a file or stream, or one line saying where the bad byte is. A byte order mark
    opening it is the encoding's, not the text's (YAML allows it): left in, it would become part of
    the first key, or of an item's first line once the document is sent in a ResourceList."""
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        line = raw[: err.start].count(b"\n") + 1
        raise InputError(f"{source}:{line}: invalid UTF-8 (byte {err.start})") from None
