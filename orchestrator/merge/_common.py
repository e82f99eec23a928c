"""Shared vocabulary of the merges: the absent-value marker, strict equality, field paths, conflicts."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from orchestrator.annotations import get_path, identity, is_resource
from orchestrator.errors import InputError


class _Missing:
    """A field that is absent, as opposed to present with `null` (which means "clear it")."""

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()

#: Types a YAML scalar loads as (libyaml SafeLoader); anything else is a map or a list.
SCALARS = (str, int, float, bool, bytes)


def same(a: Any, b: Any) -> bool:
    """Deep equality that tells `1`, `1.0` and `true` apart: in YAML they are different values, so a
    change between them is a change upstream."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(v, b[k]) for k, v in a.items())
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b


@dataclass(frozen=True)
class Where:
    """Where in a resource a value sits: its kind and field path decide which Kubernetes merge key a
    list uses, and conflicts name the path."""

    kind: str = ""
    path: tuple[str, ...] = ()

    def field(self, name: Any) -> Where:
        return Where(self.kind, (*self.path, str(name)))

    def element(self, selector: str) -> Where:
        return Where(self.kind, (*self.path, selector))

    def __str__(self) -> str:
        if not self.path:
            return "(the whole document)"
        text = ""
        for part in self.path:
            text += part if part.startswith("[") or not text else "." + part
        return text


class MergeConflict(InputError):
    """Inputs the merge rules cannot decide between; reported, never guessed (exit 2)."""

    def __init__(self, where: Where | str, reason: str, resource: str = "") -> None:
        self.path = str(where)
        self.reason = reason
        self.resource = resource
        prefix = f"{resource}: " if resource else ""
        super().__init__(f"{prefix}merge conflict at {self.path}: {reason}")


def describe(data: Any) -> str:
    """How messages name a resource: `Deployment default/web (app/deploy.yaml)`."""
    _, kind, namespace, name = identity(data)
    text = f"{kind or 'resource'} {namespace + '/' if namespace else ''}{name or '(unnamed)'}"
    path = get_path(data)
    return f"{text} ({path})" if path else text


def kind_of(*values: Any) -> str:
    """The resource kind of the first value that is a resource: merge keys can depend on it."""
    for value in values:
        if is_resource(value) and isinstance(value["kind"], str):
            return value["kind"]
    return ""
