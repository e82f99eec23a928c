"""The last check before a file is written: its new text parses, and its resources are, as data,
what the functions returned for that file. Every text edit is checked where it is made; this is
the net under all of them together (separators, prefixes, a file's tail), so that a flaw anywhere
in the write-back ends as a refused write, never as a file that does not parse."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import yaml

from .. import annotations as ann
from ..errors import InputError
from ..resource import Resource
from ..yamlio import fast, meaning, roundtrip


class Unfaithful(InputError):
    """fnrun could not write what the functions returned: the whole write is refused (exit 2)."""


def problem(content: str, resources: list[Resource]) -> tuple[int, str] | None:
    """(1-based line, what is wrong) when `content` does not parse or its resources differ from
    `resources`' values (or means what they mean in YAML 1.1: yamlio/meaning); None when it is
    right. Documents that are not resources are the file's own and not compared; one with
    duplicate keys or an application tag, read leniently as the reader does, is the next resource
    if it equals it, else the file's own, left in its layout."""
    found = _documents(content)
    if isinstance(found, tuple):
        return found
    wanted = [r.value for r in resources if ann.is_resource(r.value)]
    number = 0
    for line, value, span, odd in found:
        if number >= len(wanted) or not _same(value, wanted[number], content[span]):
            if odd:
                continue  # a document the reader left in the file's layout
            if number >= len(wanted):
                return line, "a document the functions did not return"
            return line, f"{ann.identity(wanted[number])[1]}/{ann.identity(wanted[number])[3]} does not read back as returned"
        number += 1
    if number < len(wanted):
        return content.count("\n") + 1, "a returned resource is missing"
    return None


def _same(value: Any, wanted: Any, text: str) -> bool:
    return roundtrip.same(value, wanted) or roundtrip.same(meaning.kept(wanted, value, text), value)


def _documents(content: str) -> list[tuple[int, Any, slice, bool]] | tuple[int, str]:
    """(start line, value, where its text is, whether it is odd) of each resource document of
    the stream, or (line, problem)."""
    loader = fast.StrictLoader(content)
    found: list[tuple[int, Any, slice, bool]] = []
    try:
        while loader.check_node():
            node = loader.get_node()
            odd = False
            try:
                value = loader.construct_document(node)
            except yaml.MarkedYAMLError:  # duplicate keys, an application tag: read as the reader does
                loader._strict, odd = False, True
                loader.constructed_objects, loader.recursive_objects = {}, {}
                value = loader.construct_document(node)
                loader._strict = True
            if ann.is_resource(value):
                span = slice(content.rfind("\n", 0, node.start_mark.index) + 1, node.end_mark.index)
                found.append((node.start_mark.line + 1, value, span, odd))
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        return (mark.line + 1 if mark else 1), str(err.problem or err)
    except yaml.YAMLError as err:
        return 1, str(err)
    finally:
        loader.dispose()
    return found


def checked(path: str, assemble: Callable[[bool], bytes], resources: list[Resource], old: bytes | None) -> bytes:
    """The file's bytes as `assemble(False)` makes them when they are right (or the file's own,
    unchanged); else as `assemble(True)` makes them, each changed resource that does not read back
    alone written as a plain dump of its value; else an error naming the line."""
    new = assemble(False)
    if new == old or problem(_text(new), resources) is None:
        return new
    new = assemble(True)
    wrong = problem(_text(new), resources)
    if wrong is None:
        return new
    line, what = wrong
    raise Unfaithful(f"{path}:{line}: fnrun cannot write this file as the functions returned it ({what}); nothing was written")


def _text(content: bytes) -> str:
    """The file's text as the reader takes it: a file without a final newline is read with one."""
    found = content.decode("utf-8-sig").replace("\r\n", "\n")
    return found if found.endswith("\n") or not found else found + "\n"
