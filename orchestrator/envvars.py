"""A functionConfig as environment variables and `--key=value` flags, for `fnrun wrap` / `xargs`.

Shell templates read their inputs as `${NAME}`, `${REPLICAS}`; this module decides which fields
become which variables (docs/functions/shell-templates.md), so the rules live in one place:

- `metadata.name` -> `NAME`, `metadata.namespace` -> `NAMESPACE`;
- every scalar under `spec` and under `data`, at any depth through maps: the key path joined with
  `_`, camelCase split with `_`, uppercased (`replicas` -> `REPLICAS`, `maxSurge` -> `MAX_SURGE`,
  `spec.resources.cpuLimit` -> `RESOURCES_CPU_LIMIT`, `HTTPPort` -> `HTTP_PORT`); characters a
  shell variable cannot hold (`-`, `.`) become `_`, and a leading digit gets a `_` in front;
- a list is one variable holding its compact JSON (`[80,443]`), which `jq` reads; a map inside
  a list is not flattened;
- values as YAML spells them: `true`/`false`, numbers as written by the YAML core schema
  (`5`, `1.5`, `.inf`), and `null` as the empty string (so it still replaces an inherited value);
- two fields that map to one name: the later one wins (metadata, then spec, then data, each in
  document order), as kustomize's xargs does;
- names the process itself depends on are never replaced (`PATH`, `HOME`, `PWD`, `IFS`, `SHELL`,
  `LD_*`): a `spec.path` field must not stop CMD from finding `cat`. `protected` tells which.

Flags (`xargs`) carry the same fields under their original spelling, dotted through maps:
`--name=my-instance`, `--replicas=5`, `--maxSurge=25%`, `--resources.cpuLimit=2`. A top-level
`items:` list of the functionConfig follows them as positional arguments, in order, each spelled
like a value above (kustomize's and kpt's xargs: `CMD --flag1=value1 2 1`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from .yamlio.emit import core_spelling

_CAMEL_LOWER_UPPER = re.compile(r"([a-z0-9])([A-Z])")
_CAMEL_ACRONYM = re.compile(r"([A-Z]+)([A-Z][a-z])")
_NOT_NAME = re.compile(r"[^A-Za-z0-9_]")

#: Where the fields come from, in the order a later one overrides an earlier one.
SECTIONS = ("spec", "data")
PROTECTED = frozenset({"PATH", "HOME", "PWD", "IFS", "SHELL"})


def env_name(path: tuple[str, ...]) -> str:
    """`("resources", "cpuLimit")` -> `RESOURCES_CPU_LIMIT`."""
    parts = [_CAMEL_ACRONYM.sub(r"\1_\2", _CAMEL_LOWER_UPPER.sub(r"\1_\2", part)) for part in path]
    name = _NOT_NAME.sub("_", "_".join(parts)).upper()
    return "_" + name if name[:1].isdigit() else name


def scalar_text(value: Any) -> str:
    """A value as the shell sees it: the YAML spelling of scalars, compact JSON for the rest."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, (bool, int, float)):
        return core_spelling(value)
    return json.dumps(value, separators=(",", ":"), default=str, ensure_ascii=False)


def fields(config: dict | None) -> list[tuple[tuple[str, ...], Any]]:
    """The functionConfig's exported fields as (key path, value), in override order."""
    if not isinstance(config, dict):
        return []
    found: list[tuple[tuple[str, ...], Any]] = []
    metadata = config.get("metadata")
    if isinstance(metadata, dict):
        found.extend(((key,), metadata[key]) for key in ("name", "namespace") if key in metadata and not isinstance(metadata[key], dict))
    for section in SECTIONS:
        value = config.get(section)
        if isinstance(value, dict):
            found.extend(_leaves(value, ()))
    return found


def _leaves(mapping: dict, prefix: tuple[str, ...]) -> Iterator[tuple[tuple[str, ...], Any]]:
    for key, value in mapping.items():
        path = (*prefix, str(key))
        if isinstance(value, dict):
            yield from _leaves(value, path)
        else:
            yield path, value


def protected(name: str) -> bool:
    return name in PROTECTED or name.startswith("LD_")


def environment(config: dict | None) -> dict[str, str]:
    """The variables to add to the command's environment (protected names included: the caller
    leaves those out and says so)."""
    return {env_name(path): scalar_text(value) for path, value in fields(config)}


def flags(config: dict | None) -> list[str]:
    """The `--key=value` arguments `fnrun xargs` appends to the command's own."""
    return [f"--{'.'.join(path)}={scalar_text(value)}" for path, value in fields(config)]


def positional(config: dict | None) -> list[str]:
    """The functionConfig's `items:` list, the positional arguments `fnrun xargs` puts after the
    flags (anything but a list there carries no positional meaning and is left out)."""
    items = config.get("items") if isinstance(config, dict) else None
    return [scalar_text(item) for item in items] if isinstance(items, list) else []
