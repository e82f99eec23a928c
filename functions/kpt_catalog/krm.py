"""The process contract shared by the kpt catalog builtins: a ResourceList on stdin (YAML or JSON),
a transform over plain data, the ResourceList as JSON on stdout (JSON is YAML), messages on stderr.

A transform returns its results (kpt's result dicts); an error-severity result, or a ConfigError,
makes the exit code 1, as kpt's functions do."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable
from typing import Any

import yaml

Item = dict[str, Any]
Transform = Callable[[list[Item], Item], list[dict]]


class Loader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """YAML 1.2 core schema, as kpt reads its input: `yes`, `on` and dates stay strings."""

    yaml_implicit_resolvers: dict = {}


for _tag, _pattern, _first in (
    ("bool", r"^(?:true|True|TRUE|false|False|FALSE)$", "tTfF"),
    ("int", r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$", "-+0123456789"),
    ("float", r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$", "-+.0123456789"),
    ("null", r"^(?:~|null|Null|NULL|)$", ["~", "n", "N", ""]),
):
    Loader.add_implicit_resolver(f"tag:yaml.org,2002:{_tag}", re.compile(_pattern), list(_first))


class ConfigError(Exception):
    """A bad functionConfig: one line on stderr and an error result, exit 1."""


def config_data(config: Item, *fields: str) -> dict:
    """What a function reads its settings from: a ConfigMap's `data`, else the named top-level
    fields of its own kind (`SetLabels` `labels:`...), else `spec`."""
    if config.get("kind") == "ConfigMap" and str(config.get("apiVersion", "v1")) == "v1":
        return dict(config.get("data") or {})
    found = {name: config[name] for name in fields if name in config}
    return found or dict(config.get("spec") or {})


def metadata(item: Item) -> dict:
    """The item's metadata; a detached empty one where it has none (nothing is written there)."""
    meta = item.get("metadata")
    return meta if isinstance(meta, dict) else {}


def annotations_of(item: Item) -> dict:
    found = metadata(item).get("annotations")
    return found if isinstance(found, dict) else {}


def is_local_config(item: Item) -> bool:
    annotations = annotations_of(item)
    return str(annotations.get("config.kubernetes.io/local-config", "")).lower() == "true"


def result(message: str, severity: str = "info", item: Item | None = None, field: str | None = None) -> dict:
    found: dict[str, Any] = {"message": message, "severity": severity}
    if item is not None:
        meta = metadata(item)
        ref = {"apiVersion": item.get("apiVersion"), "kind": item.get("kind"), "name": meta.get("name")}
        if meta.get("namespace"):
            ref["namespace"] = meta["namespace"]
        found["resourceRef"] = ref
    if field:
        found["field"] = {"path": field}
    return found


def plain(value: Any) -> Any:
    """ruamel's round-trip nodes as plain data (its booleans are ints, its scalars subclasses)."""
    from ruamel.yaml.scalarbool import ScalarBoolean

    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, ScalarBoolean):
        return bool(value)
    for kind in (bool, str, int, float):
        if isinstance(value, kind):
            return kind(value)
    return value if value is None else str(getattr(value, "value", value))


def load(raw: bytes, with_comments: bool) -> Any:
    """The ResourceList as plain data, or as ruamel's round-trip nodes for functions that read
    comments (apply-setters' `# kpt-set:` markers)."""
    if not with_comments:
        return yaml.load(raw, Loader=Loader)
    from ruamel.yaml import YAML

    return YAML(typ="rt").load(raw)


#: Most containers `unshared` visits: past it, what is left stays shared (no real file gets near).
UNSHARE_BUDGET = 1_000_000


def unshared(node: Any) -> Any:
    """`node` with every mapping and list that a YAML alias shares among places given a copy of
    its own at each place after the first: a function then never changes a value through an
    alias in a place it does not touch. (The output is plain data, where an alias is no more than
    equal values; fnrun's write-back puts the alias back where the places still agree.)"""
    seen: set[int] = set()
    stack, budget = [node], UNSHARE_BUDGET
    while stack and budget > 0:  # a value that holds itself would otherwise be copied forever
        budget -= 1
        parent = stack.pop()
        for key, child in list(parent.items() if isinstance(parent, dict) else enumerate(parent)):
            if not isinstance(child, (dict, list)):
                continue
            if id(child) in seen:
                child = parent[key] = _copy(child)
            seen.add(id(child))
            stack.append(child)
    return node


def _copy(node: Any) -> Any:
    """A deep copy without anchors (ruamel keeps a node's anchor in its copies)."""
    import copy

    fresh = copy.deepcopy(node)
    stack = [fresh]
    while stack:
        current = stack.pop()
        anchor = getattr(current, "anchor", None)
        if anchor is not None and anchor.value:
            anchor.value = None
        stack.extend(v for v in (current.values() if isinstance(current, dict) else current) if isinstance(v, (dict, list)))
    return fresh


def main(transform: Transform, prog: str, with_comments: bool = False, emit_comments: bool = False, error_exit: int = 1) -> None:
    """Run `transform` over the ResourceList on stdin. `with_comments` hands it ruamel's
    round-trip nodes; `emit_comments` also writes them back as YAML, so comments the function
    adds reach the files (JSON, faster to read back, carries none). `error_exit`: the exit code
    with an error result (the catalog's newer functions report a bad config and exit 0). Where
    fnrun hands the items over (functions/kpt_catalog/handover.py), only what changed goes back."""
    from functions.kpt_catalog import handover

    if handover.requested():
        handover.run(transform, prog, with_comments and not emit_comments, error_exit)
    raw = sys.stdin.buffer.read()
    try:
        resource_list = load(raw, with_comments) or {}
    except Exception as err:  # noqa: BLE001 - PyYAML's or ruamel's parse errors, one line either way
        print(f"{prog}: input is not YAML: {str(err).splitlines()[0]}", file=sys.stderr)
        sys.exit(1)
    items = resource_list.get("items") or []
    if b"*" in raw:  # an alias is written `*name`: without one, nothing is shared
        items = unshared(items)
    config = resource_list.get("functionConfig") or {}
    try:
        results = transform(items, config)
    except ConfigError as err:
        print(f"{prog}: {err}", file=sys.stderr)
        results = [result(str(err), "error")]
    except Exception as err:  # noqa: BLE001 - a bug or an input no kpt package has: one line, exit 1
        print(f"{prog}: internal error: {type(err).__name__}: {' '.join(str(err).split())}", file=sys.stderr)
        sys.exit(1)
    resource_list["items"] = items
    if results:
        resource_list["results"] = [*(resource_list.get("results") or []), *results]
    if with_comments and emit_comments:
        from ruamel.yaml import YAML

        yaml = YAML(typ="rt")
        yaml.width = 1 << 16  # never fold a long string: the fold differs between ruamel releases
        yaml.dump(resource_list, sys.stdout)
    else:
        sys.stdout.write(json.dumps(plain(resource_list) if with_comments else resource_list))
    sys.exit(error_exit if any(r.get("severity") == "error" for r in results) else 0)


def group_of(item: Item) -> str:
    api_version = str(item.get("apiVersion") or "")
    return api_version.rpartition("/")[0] if "/" in api_version else ""


def walk(node: Any, path: list[str], create: bool | int) -> list[dict]:
    """The mappings at `path` (segments; `name[]` steps into every element of a list). `create`
    makes what is missing, never through lists: True all of it, a number only that many last
    levels (kpt's set-labels gives a pod template `metadata.labels`, but gives a Deployment
    without a template none, while its set-annotations makes the template)."""
    if not path:
        return [node] if isinstance(node, dict) else []
    if not isinstance(node, dict):
        return []
    head, rest = path[0], path[1:]
    if head.endswith("[]"):
        found = node.get(head[:-2])
        return [m for element in found for m in walk(element, rest, False)] if isinstance(found, list) else []
    if not isinstance(node.get(head), dict):
        if not create or (create is not True and len(path) > create) or (head in node and node[head] is not None):
            return []
        node[head] = {}
    return walk(node[head], rest, create)


def check_kind(config: Item, kind: str, *legacy: str) -> None:
    """kpt's functions take a ConfigMap or their own kind (group fn.kpt.dev; maybe a legacy name)."""
    if not config:
        raise ConfigError(f"FunctionConfig is missing. Expect `ConfigMap.v1` or `{kind}.v1alpha1.fn.kpt.dev`")
    if config.get("kind") == "ConfigMap" and str(config.get("apiVersion", "v1")) == "v1":
        return
    if config.get("kind") not in (kind, *legacy) or group_of(config) != "fn.kpt.dev":
        raise ConfigError(f"unknown FunctionConfig `{config.get('kind')}.{group_of(config) or 'v1'}`, expect `{kind}.fn.kpt.dev` or `ConfigMap.v1`")


def string_map(config: Item, field: str, kind: str, *legacy: str) -> dict[str, str]:
    """A map of strings from a ConfigMap's data or the config's own `field`, as the label and
    annotation setters take it."""
    check_kind(config, kind, *legacy)
    values = config_data(config, field)
    if config.get("kind") != "ConfigMap":
        values = values.get(field) or {}
    if not isinstance(values, dict):
        raise ConfigError(f"`{field}` must be a map of strings")
    return {str(k): v if isinstance(v, str) else json.dumps(v) for k, v in values.items()}
