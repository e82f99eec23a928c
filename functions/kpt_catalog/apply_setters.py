"""apply-setters (kpt catalog): set the fields marked `# kpt-set: PATTERN` from the config's values.

The pattern is the field's value with `${setter}` references (`nginx:${tag}`); a field whose
setters all have values gets the pattern with them filled in. A marked sequence (`env: #
kpt-set: ${env}`) takes a list, given in the config as a YAML list string. A field that held a
number or boolean keeps that type when the new text is one. Config: a ConfigMap's `data` (setter
name -> value). When nothing matched, an info result says so."""

from __future__ import annotations

import os
import re
import sys
from typing import Any

if __package__ in (None, ""):
    sys.path[0] = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from functions.kpt_catalog import krm

# The pattern runs from its first to its last non-blank: greedy, so a long blank run inside it is
# passed once (a lazy `.*?` before `\s*$` tried the rest of the line at every character).
_MARKER = re.compile(r"#\s*kpt-set:\s*(?P<pattern>\S(?:.*\S)?)\s*$")
_SETTER = re.compile(r"\$\{([^}]+)\}")


def apply_setters(items: list[Any], config: Any) -> list[dict]:
    if config and config.get("kind") != "ConfigMap":
        raise krm.ConfigError(f"unknown FunctionConfig `{config.get('kind')}`, expect `ConfigMap.v1`")
    setters = {str(k): "" if v is None else str(v) for k, v in ((config or {}).get("data") or {}).items()}
    applied = sum(_visit(item, setters) for item in items)
    return [] if applied else [krm.result("no matches for input setter(s)", "info")]


def _visit(node: Any, setters: dict[str, str]) -> int:
    count = 0
    keys = list(node.keys()) if isinstance(node, dict) else range(len(node)) if isinstance(node, list) else []
    for key in keys:
        pattern = _pattern(node, key)
        if pattern is not None:
            new = _value(node[key], pattern, setters)
            if new is not _SKIP:
                node[key] = new
                count += 1
                continue
        count += _visit(node[key], setters)
    return count


def _pattern(container: Any, key: Any) -> str | None:
    """The `kpt-set` pattern on a map entry's line (after its value or its key), or a list item's."""
    slots = getattr(getattr(container, "ca", None), "items", {}).get(key) or []
    tokens = [slots[2]] if isinstance(container, dict) and len(slots) > 2 else slots[:1]
    for token in tokens:
        if token is not None:
            found = _MARKER.search(token.value.splitlines()[0] if token.value.strip() else "")
            if found:
                return found.group("pattern")
    return None


_SKIP = object()


def _value(old: Any, pattern: str, setters: dict[str, str]) -> Any:
    names = _SETTER.findall(pattern)
    if not names or any(name not in setters for name in names):
        return _SKIP
    if isinstance(old, list):
        if pattern != f"${{{names[0]}}}":
            return _SKIP
        parsed = krm.load(setters[names[0]].encode(), False) if setters[names[0]].strip() else []
        return parsed if isinstance(parsed, list) else [parsed]
    if isinstance(old, dict):
        return _SKIP
    text = _SETTER.sub(lambda m: setters[m.group(1)], pattern)
    if isinstance(old, (bool, int, float)) and not isinstance(old, str):
        parsed = krm.load(text.encode(), False) if text else None
        if isinstance(parsed, (bool, int, float)):
            return parsed
    return text


if __name__ == "__main__":
    krm.main(apply_setters, "apply-setters", with_comments=True)
