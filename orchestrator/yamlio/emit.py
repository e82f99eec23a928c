"""YAML text for values that a text edit inserts: scalars in a chosen quoting style and block
collections at a given indentation. Every plain scalar it writes reads back as the same value
under the YAML 1.2 core schema (and is not a YAML 1.1 boolean, for older Kubernetes readers)."""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any

from .fast import _CORE


class Unsupported(Exception):
    """A change that text edits cannot express safely: the caller falls back to a round trip."""


_YAML11_BOOL = re.compile(r"^(?:y|Y|yes|Yes|YES|n|N|no|No|NO|on|On|ON|off|Off|OFF)$")
_PLAIN_START = re.compile(r"^[^\s\-?:,\[\]{}#&*!|>'\"%@`]|^[-?:][^\s,\[\]{}]")
_FLOW_INDICATORS = frozenset(",[]{}")


def _plain_ok(value: str, flow: bool) -> bool:
    """Whether `value` can be written without quotes and still read back as this string."""
    if not value or value != value.strip() or not value.isprintable() or "\t" in value:
        return False
    if not _PLAIN_START.match(value) or ": " in value or " #" in value or value.endswith(":"):
        return False
    if flow and (_FLOW_INDICATORS & set(value)):
        return False
    if _YAML11_BOOL.match(value):
        return False
    return not any(pattern.match(value) for _, pattern, _ in _CORE)


def _single(value: str) -> str | None:
    if "\n" in value or not value.isprintable():
        return None
    return "'" + value.replace("'", "''") + "'"


def _double(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)


def core_spelling(value: bool | int | float) -> str:
    """How the YAML core schema spells a boolean or a number."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if math.isnan(value):
            return ".nan"
        if math.isinf(value):
            return ".inf" if value > 0 else "-.inf"
        return repr(value)
    return str(value)


def scalar(value: Any, style: str | None = None, flow: bool = False) -> str:
    """One-line YAML for a scalar; strings keep `style` (`'`, `"` or plain None) where they can."""
    if value is None:
        return "null"
    if isinstance(value, (bool, int, float)):
        return core_spelling(value)
    if not isinstance(value, str):
        raise Unsupported(f"a {type(value).__name__} scalar")
    if style == '"':
        return _double(value)
    if style != "'" and _plain_ok(value, flow):
        return value
    return _single(value) or _double(value)


@dataclass(frozen=True)
class Layout:
    """How new block collections are indented: `step` columns for a nested mapping, a sequence's
    dash `offset` columns right of its key, and `dash` columns from a dash to the item content."""

    step: int = 2
    offset: int = 0
    dash: int = 2


def _key(key: Any) -> str:
    if isinstance(key, (dict, list)):
        raise Unsupported("a collection as a mapping key")
    return scalar(key)


def pair(key: Any, value: Any, column: int, layout: Layout) -> list[str]:
    """Lines of `key: value` at `column`, nested collections in block style."""
    head = " " * column + _key(key) + ":"
    if isinstance(value, dict) and value:
        return [head + "\n", *mapping(value, column + layout.step, layout)]
    if isinstance(value, list) and value:
        return [head + "\n", *sequence(value, column + layout.offset, layout)]
    return [head + " " + inline(value) + "\n"]


def inline(value: Any) -> str:
    """A scalar, or an empty collection as `{}` / `[]`."""
    if isinstance(value, dict):
        if value:
            raise Unsupported("a non-empty mapping inline")
        return "{}"
    if isinstance(value, list):
        if value:
            raise Unsupported("a non-empty list inline")
        return "[]"
    return scalar(value)


def mapping(value: dict, column: int, layout: Layout) -> list[str]:
    lines: list[str] = []
    for key, child in value.items():
        lines += pair(key, child, column, layout)
    return lines


def sequence(value: list, column: int, layout: Layout) -> list[str]:
    """Block sequence items with their dash at `column`."""
    lines: list[str] = []
    dash = "-" + " " * (layout.dash - 1)
    for item in value:
        lines += item_lines(item, column, layout.dash, layout)
    return lines if lines else [" " * column + dash.rstrip() + "\n"]


def item_lines(item: Any, column: int, width: int, layout: Layout) -> list[str]:
    """One sequence item: the dash at `column`, its content `width` columns to the right."""
    dash = " " * column + "-" + " " * (width - 1)
    if isinstance(item, dict) and item:
        inner = mapping(item, column + width, layout)
        return [dash + inner[0][column + width :], *inner[1:]]
    if isinstance(item, list) and item:
        return [" " * column + "-\n", *sequence(item, column + width, layout)]
    return [dash + inline(item) + "\n"]
