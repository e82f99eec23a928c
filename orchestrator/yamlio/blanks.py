"""Lines that end in blanks after a tab: libyaml (fnrun's reader) takes them, the pure-Python
parsers (PyYAML, ruamel.yaml: most functions, and fnrun's own round-trip editor) refuse the whole
document. What a parser is given goes without them; what is written keeps the user's bytes."""

from __future__ import annotations

from collections.abc import Iterator

from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from ..errors import InputError
from . import fast


def parseable(document: str) -> str:
    """The document with the blanks removed that end a line in a tab, outside block scalars (where
    they are content). libyaml, fnrun's reader, accepts such a line; the pure-Python parsers most
    functions use (PyYAML, ruamel.yaml) refuse the whole input. Files keep their bytes: write-back
    compares what comes back by value and comments, and an unchanged resource keeps its text."""
    if "\t" not in document:
        return document
    lines = document.splitlines(keepends=True)
    ending = [number for number, line in enumerate(lines) if _ends_in_tab(line)]
    if not ending:
        return document
    try:
        node = fast.compose(document, "item")
    except InputError:
        return document
    protected = _block_scalar_lines(node, lines)
    for number in ending:
        if number not in protected:
            line = lines[number]
            lines[number] = line.rstrip("\n").rstrip(" \t") + ("\n" if line.endswith("\n") else "")
    return "".join(lines)


def _ends_in_tab(line: str) -> bool:
    content = line.rstrip("\n")
    return "\t" in content[len(content.rstrip(" \t")) :]


def _block_scalar_lines(root: Node | None, lines: list[str]) -> set[int]:
    """The content lines of every literal or folded block scalar (its end mark stands at the next
    token's indentation, on a line of its own)."""
    found: set[int] = set()
    for node in scalars(root):
        if node.style in ("|", ">"):
            end = node.end_mark
            after = end.line < len(lines) and not lines[end.line][: end.column].strip()
            found.update(range(node.start_mark.line + 1, end.line + (0 if after else 1)))
    return found


def scalars(root: Node | None) -> Iterator[ScalarNode]:
    """Every scalar node of a tree, keys included, each once (an alias shares its anchor's node)."""
    pending, seen = [root], set()
    while pending:
        node = pending.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, ScalarNode):
            yield node
        elif isinstance(node, SequenceNode):
            pending.extend(node.value)
        elif isinstance(node, MappingNode):
            pending.extend(part for pair in node.value for part in pair)
