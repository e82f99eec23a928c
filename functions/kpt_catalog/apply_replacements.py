"""apply-replacements (kpt catalog): kustomize's `replacements` over the package. Each
replacement copies one value, a source resource's field, into fields of the resources its targets
select.

Config: `ApplyReplacements` (fn.kpt.dev) with `replacements: [{source, targets}]`:
- source: `group`, `version`, `kind`, `name`, `namespace` naming exactly one resource; `fieldPath`
  (default `metadata.name`); `options.delimiter`/`options.index` take one part of the value.
- target: `select` (those fields, plus `labelSelector`/`annotationSelector` as `k=v,k2=v2`),
  `reject` (a list of selectors), `fieldPaths` (default `metadata.name`), `options.create` (make
  missing fields), `options.delimiter`/`options.index` (replace one part of the current value).

A field path is dot-separated; `[key]` names a key holding dots (`data.[app.kubernetes.io/app]`),
`[name=value]` the list elements with that field, a number a list index, `*` every element. A
target field that does not exist, without `create`, is left alone, as kustomize does."""

from __future__ import annotations

import copy
import os
import sys
from typing import Any

if __package__ in (None, ""):
    sys.path[0] = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from functions.kpt_catalog import krm

_ID_FIELDS = ("group", "version", "kind", "name", "namespace")


def apply_replacements(items: list[krm.Item], config: krm.Item) -> list[dict]:
    if config.get("kind") != "ApplyReplacements" or krm.group_of(config) != "fn.kpt.dev":
        raise krm.ConfigError(f"unknown FunctionConfig `{config.get('kind')}`, expect `ApplyReplacements.fn.kpt.dev`")
    replacements = config.get("replacements")
    if not isinstance(replacements, list):
        raise krm.ConfigError("ApplyReplacements needs a list of `replacements`")
    for number, replacement in enumerate(replacements):
        if not isinstance(replacement, dict) or not isinstance(replacement.get("source"), dict):
            raise krm.ConfigError(f"replacements[{number}]: needs a `source`")
        value = _source_value(items, replacement["source"], number)
        for target in replacement.get("targets") or []:
            if not isinstance(target, dict) or not isinstance(target.get("select"), dict):
                raise krm.ConfigError(f"replacements[{number}]: each target needs a `select`")
            _apply(items, target, value, number)
    return []


def _source_value(items: list[krm.Item], source: dict, number: int) -> Any:
    found = [item for item in items if _selects(source, item)]
    if len(found) != 1:
        what = "no resource" if not found else f"{len(found)} resources"
        raise krm.ConfigError(f"replacements[{number}]: source {_describe(source)} matches {what}; it must match exactly one")
    field_path = str(source.get("fieldPath") or "metadata.name")
    values = _get(found[0], _parse(field_path))
    if not values:
        raise krm.ConfigError(f"replacements[{number}]: source {_describe(source)} has no field {field_path}")
    value = copy.deepcopy(values[0])
    options = source.get("options") or {}
    if options.get("delimiter"):
        parts = str(value).split(str(options["delimiter"]))
        index = int(options.get("index") or 0)
        if not -len(parts) <= index < len(parts):
            raise krm.ConfigError(f"replacements[{number}]: options.index {index} is out of bounds for value {value}")
        value = parts[index]
    return value


def _apply(items: list[krm.Item], target: dict, value: Any, number: int) -> None:
    options = target.get("options") or {}
    rejects = [r for r in target.get("reject") or [] if isinstance(r, dict)]
    for item in items:
        if not _selects(target["select"], item) or any(_selects(reject, item) for reject in rejects):
            continue
        for field_path in target.get("fieldPaths") or ["metadata.name"]:
            _set(item, _parse(str(field_path)), value, options, number)


def _selects(selector: dict, item: krm.Item) -> bool:
    meta = krm.metadata(item)
    api_version = str(item.get("apiVersion") or "")
    have = {"group": krm.group_of(item), "version": api_version.rpartition("/")[2], "kind": item.get("kind"),
            "name": meta.get("name"), "namespace": meta.get("namespace")}
    if not all(selector.get(key) in (None, "", have[key]) for key in _ID_FIELDS):
        return False
    for field, key in (("labelSelector", "labels"), ("annotationSelector", "annotations")):
        wanted = selector.get(field)
        present = given if isinstance(given := meta.get(key), dict) else {}
        if wanted and not all(present.get(k.strip()) == v.strip() for k, _, v in (term.partition("=") for term in str(wanted).split(","))):
            return False
    return True


def _describe(selector: dict) -> str:
    return "/".join(str(selector[key]) for key in _ID_FIELDS if selector.get(key)) or "{}"


def _parse(field_path: str) -> list[str]:
    """Segments of a field path: dots split it, except inside brackets (one pass, no backtracking)."""
    segments: list[str] = []
    current: list[str] = []
    depth = 0
    for char in field_path:
        if char == "." and depth == 0:
            segments.append("".join(current))
            current = []
            continue
        depth += (char == "[") - (char == "]")
        current.append(char)
    segments.append("".join(current))
    return [s[1:-1] if s.startswith("[") and s.endswith("]") and "=" not in s else s for s in segments if s]


def _get(node: Any, path: list[str]) -> list[Any]:
    if not path:
        return [node]
    head, rest = path[0], path[1:]
    if isinstance(node, list):
        return [found for element in _elements(node, head) for found in _get(element, rest)]
    if isinstance(node, dict) and head in node:
        return _get(node[head], rest)
    return []


def _elements(node: list, segment: str) -> list[Any]:
    """The list elements a segment names: `*`, an index, or `[field=value]`."""
    if segment == "*":
        return node
    if segment.lstrip("-").isdigit():
        index = int(segment)
        return [node[index]] if -len(node) <= index < len(node) else []
    key, _, wanted = segment.strip("[]").partition("=")
    return [e for e in node if isinstance(e, dict) and str(e.get(key)) == wanted]


def _set(node: Any, path: list[str], value: Any, options: dict, number: int) -> None:
    head, rest = path[0], path[1:]
    if isinstance(node, list):
        for element in _elements(node, head):
            if rest:
                _set(element, rest, value, options, number)
        return
    if not isinstance(node, dict):
        return
    if not rest:
        if head in node or options.get("create"):
            node[head] = _replaced(node.get(head), value, options, number)
        return
    if node.get(head) is None:
        if not options.get("create"):
            return
        node[head] = [] if rest[0].startswith("[") or rest[0].isdigit() else {}
    _set(node[head], rest, value, options, number)


def _replaced(current: Any, value: Any, options: dict, number: int) -> Any:
    """The value itself, or with a delimiter the current value with one part replaced."""
    if not options.get("delimiter"):
        return copy.deepcopy(value)
    delimiter = str(options["delimiter"])
    parts = str(current or "").split(delimiter)
    index = int(options.get("index") or 0)
    if index < 0 or index > len(parts):
        raise krm.ConfigError(f"replacements[{number}]: options.index {index} is out of bounds for value {current}")
    if index == len(parts):
        parts.append("")
    parts[index] = str(value)
    return delimiter.join(parts)


if __name__ == "__main__":
    krm.main(apply_replacements, "apply-replacements")
