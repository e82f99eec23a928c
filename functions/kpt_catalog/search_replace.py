"""search-replace (kpt catalog): find scalar fields by value, regex, field path and file path
(all given matchers must hold) and, with `put-value`, set them (`${1}` takes the regex's groups).

`by-path` is a dot path: `*` is one field, `**` any number, `[1]` and `[*]` list elements; with
`put-value` and a path without wildcards the field is created where it is missing, as kpt does.
`by-file-path` is a glob on the resource's file (`**/` any directories). Config: a ConfigMap's
`data`. `put-comment` puts a line comment on each matching field (`${1}` as in `put-value`; kpt's
way to create `kpt-set:` setters): the items are read and written back as ruamel's round-trip
nodes, so the comment reaches the file."""

from __future__ import annotations

import fnmatch
import os
import re
import sys
from collections.abc import Iterator
from typing import Any

if __package__ in (None, ""):
    sys.path[0] = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from functions.kpt_catalog import handover, krm, regex

_KEYS = {"by-value", "by-value-regex", "by-path", "by-file-path", "put-value", "put-comment"}
_GROUP = re.compile(r"\$\{(\d+)\}")
_PATH_ANNOTATIONS = ("internal.config.kubernetes.io/path", "config.kubernetes.io/path")


def search_replace(items: list[krm.Item], config: krm.Item) -> list[dict]:
    data = {str(k): "" if v is None else str(v) for k, v in krm.config_data(config).items()}
    unknown = sorted(set(data) - _KEYS)
    if unknown:
        raise krm.ConfigError(f"unknown field `{unknown[0]}` (known: {', '.join(sorted(_KEYS))})")
    if not data:  # as the catalog's image: no config (kpt fn eval's empty ConfigMap) searches for nothing and succeeds
        return []
    if not data.keys() & {"by-value", "by-value-regex", "by-path"}:
        raise krm.ConfigError("at least one of [by-value, by-value-regex, by-path] must be provided")
    if "by-value" in data and "by-value-regex" in data:
        raise krm.ConfigError("only one of [by-value, by-value-regex] can be provided")
    try:
        by_regex = regex.compile(data["by-value-regex"]) if "by-value-regex" in data else None
    except ValueError as err:
        raise krm.ConfigError(f"by-value-regex: {err}") from None
    pattern = _segments(data["by-path"]) if "by-path" in data else None
    if "put-comment" in data and not all(hasattr(item, "yaml_add_eol_comment") for item in items):
        raise handover.NeedsText  # comments go on round-trip nodes, which plain data is not
    results = []
    for item in items:
        if "by-file-path" in data and not _file_matches(_file_of(item), data["by-file-path"]):
            continue
        for parent, key, path in list(_scalars(item, [])):
            value = krm.plain(parent[key])
            text = "" if value is None else str(value).lower() if isinstance(value, bool) else str(value)
            found = by_regex.fullmatch(text) if by_regex else None
            if (by_regex and not found) or ("by-value" in data and text != data["by-value"]):
                continue
            if pattern is not None and not _path_matches(pattern, path):
                continue
            if "put-value" in data:
                parent[key] = _typed(value, _filled(data["put-value"], found))
            if "put-comment" in data:
                parent.yaml_add_eol_comment(_filled(data["put-comment"], found), key, column=0)
            done = "Mutated" if data.keys() & {"put-value", "put-comment"} else "Matched"
            results.append(krm.result(f"{done} field value `{text}`", "info", item, ".".join(path)))
        if pattern is not None and "put-value" in data and not any(s in ("*", "**", "[*]") for s in pattern) and not data.keys() & {"by-value", "by-value-regex"}:
            if _create(item, pattern, data["put-value"]):
                results.append(krm.result(f"Mutated field value to `{data['put-value']}`", "info", item, data["by-path"]))
    return results or [krm.result("no matches", "info")]


def _segments(path: str) -> list[str]:
    """`a.b[1].c` -> ['a', 'b', '[1]', 'c']."""
    segments = []
    for part in path.split("."):
        name, _, rest = part.partition("[")
        if name:
            segments.append(name)
        segments += [f"[{index}" for index in rest.split("[") if index] if rest else []
    return segments


def _scalars(node: Any, path: list[str]) -> Iterator[tuple[Any, Any, list[str]]]:
    entries = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for key, value in list(entries):
        step = f"[{key}]" if isinstance(node, list) else str(key)
        if isinstance(value, (dict, list)):
            yield from _scalars(value, [*path, step])
        else:
            yield node, key, [*path, step]


def _path_matches(pattern: list[str], path: list[str]) -> bool:
    if not pattern:
        return not path
    head = pattern[0]
    if head == "**":
        return any(_path_matches(pattern[1:], path[i:]) for i in range(len(path) + 1))
    if not path:
        return False
    step = path[0]
    ok = head == step or (head == "*" and not step.startswith("[")) or (head == "[*]" and step.startswith("["))
    return ok and _path_matches(pattern[1:], path[1:])


def _create(item: krm.Item, pattern: list[str], value: str) -> bool:
    node: Any = item
    for segment in pattern[:-1]:
        if segment.startswith("["):
            return False
        if not isinstance(node.get(segment), dict):
            if segment in node:
                return False
            node[segment] = {}
        node = node[segment]
    if pattern[-1].startswith("[") or pattern[-1] in node:
        return False
    node[pattern[-1]] = value
    return True


def _filled(template: str, found: Any) -> str:
    """template with each ${N} replaced by the regex match's group N (as given without a match)."""
    if not found:
        return template
    return _GROUP.sub(lambda m: found.group(int(m.group(1))) or "", template)


def _typed(old: Any, new: str) -> Any:
    """A number or boolean field stays one when the new text is one."""
    if isinstance(old, (bool, int, float)):
        parsed = krm.load(new.encode(), False) if new else None
        if isinstance(parsed, (bool, int, float)):
            return parsed
    return new


def _file_of(item: krm.Item) -> str:
    annotations = krm.annotations_of(item)
    return next((str(annotations[a]) for a in _PATH_ANNOTATIONS if annotations.get(a)), "")


def _file_matches(path: str, glob: str) -> bool:
    """A glob where `*` stays within a directory and `**/` spans any number of them."""
    expression = ""
    for part in re.split(r"(\*\*/|\*\*|\*|\?)", glob):
        expression += {"**/": "(?:.*/)?", "**": "[^/]*", "*": "[^/]*", "?": "[^/]"}.get(part, regex.escape(part))
    return regex.compile(expression).fullmatch(path) is not None or fnmatch.fnmatchcase(path, glob.replace("**/", ""))


if __name__ == "__main__":
    krm.main(search_replace, "search-replace", with_comments=True, emit_comments=True)
