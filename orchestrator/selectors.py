"""Which resources a function is given: kpt's `selectors` and `exclude`.

Fields within one selector must all hold; a resource is selected when any selector matches (no
selectors: every resource), unless any exclude entry matches it. Resources not selected pass
through the step untouched. `apiVersion` and `kind` compare exactly, `name` and `namespace` too
(a namespace of "" matches resources without one), labels and annotations are subsets.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

from . import annotations as ann
from .envvars import scalar_text
from .errors import InputError
from .resource import Resource

_FIELDS = {"apiVersion", "kind", "name", "namespace", "labels", "annotations"}


@dataclass(frozen=True)
class Selector:
    api_version: str | None = None
    kind: str | None = None
    name: str | None = None
    namespace: str | None = None
    labels: tuple[tuple[str, str], ...] = field(default=())
    annotations: tuple[tuple[str, str], ...] = field(default=())

    @classmethod
    def from_dict(cls, value: Any, where: str) -> "Selector":
        """A selector as a Kptfile writes it; unknown fields are an error naming `where`."""
        if not isinstance(value, dict):
            raise InputError(f"{where}: a selector must be a mapping, not {value!r}")
        unknown = sorted(set(map(str, value)) - _FIELDS)
        if unknown:
            raise InputError(f"{where}: unknown selector field {unknown[0]!r} (allowed: {', '.join(sorted(_FIELDS))})")
        return cls(
            api_version=_text(value.get("apiVersion"), where),
            kind=_text(value.get("kind"), where),
            name=_text(value.get("name"), where),
            namespace=_text(value.get("namespace"), where),
            labels=_pairs(value.get("labels"), where, "labels"),
            annotations=_pairs(value.get("annotations"), where, "annotations"),
        )

    def matches(self, data: dict) -> bool:
        metadata = data.get("metadata") if isinstance(data.get("metadata"), dict) else {}
        if self.api_version is not None and data.get("apiVersion") != self.api_version:
            return False
        if self.kind is not None and data.get("kind") != self.kind:
            return False
        if self.name is not None and metadata.get("name") != self.name:
            return False
        if self.namespace is not None and (metadata.get("namespace") or "") != self.namespace:
            return False
        labels = metadata.get("labels") if isinstance(metadata.get("labels"), dict) else {}
        if any(str(labels.get(k)) != v for k, v in self.labels):
            return False
        annotations = ann.annotations_of(data)
        return all(str(annotations.get(k)) == v for k, v in self.annotations)


def selected(resource: Resource, selectors: Sequence[Selector], exclude: Sequence[Selector]) -> bool:
    data = resource.data
    if selectors and not any(s.matches(data) for s in selectors):
        return False
    return not any(e.matches(data) for e in exclude)


def parse_list(value: Any, where: str) -> tuple[Selector, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        raise InputError(f"{where}: must be a list of selectors")
    return tuple(Selector.from_dict(entry, f"{where}[{n}]") for n, entry in enumerate(value))


def _text(value: Any, where: str) -> str | None:
    if value is None:
        return None
    if isinstance(value, (dict, list)):
        raise InputError(f"{where}: selector fields are strings, not {value!r}")
    return str(value)


def _pairs(value: Any, where: str, name: str) -> tuple[tuple[str, str], ...]:
    if value is None:
        return ()
    if not isinstance(value, dict):
        raise InputError(f"{where}: {name} must be a mapping")
    return tuple((str(k), scalar_text(v)) for k, v in value.items())  # `true` as YAML spells it
