"""Kpt's resource selectors: a Kptfile step's `selectors`/`exclude` and `run --match-*/--exclude-*`.

Within one selector every given field must hold (labels and annotations: every pair); a list of
selectors chooses what any of them matches; `exclude` then removes what any of its selectors
matches. Comparisons are exact strings, as kpt's: `namespace: default` does not match a resource
without a namespace."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable

from ..errors import InputError
from ..resource import Resource

_FIELDS = {"apiVersion": "api_version", "kind": "kind", "name": "name", "namespace": "namespace", "labels": "labels", "annotations": "annotations"}


@dataclass(frozen=True)
class Selector:
    api_version: str | None = None
    kind: str | None = None
    name: str | None = None
    namespace: str | None = None
    labels: dict[str, str] = field(default_factory=dict)
    annotations: dict[str, str] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, data: Any, where: str = "selector") -> "Selector":
        """A selector from its Kptfile form; unknown fields and wrong types are InputErrors."""
        if not isinstance(data, dict):
            raise InputError(f"{where}: a selector must be a mapping")
        unknown = set(data) - set(_FIELDS)
        if unknown:
            raise InputError(f"{where}: unknown selector field(s) {', '.join(sorted(map(str, unknown)))}")
        values: dict[str, Any] = {}
        for key, attribute in _FIELDS.items():
            value = data.get(key)
            if value is None:
                continue
            if key in ("labels", "annotations"):
                if not isinstance(value, dict):
                    raise InputError(f"{where}: {key} must be a mapping")
                values[attribute] = {str(k): _text(v) for k, v in value.items()}
            else:
                values[attribute] = _text(value)
        return cls(**values)

    def matches(self, resource: Resource | dict) -> bool:
        data = resource.data if isinstance(resource, Resource) else resource
        meta = data.get("metadata") if isinstance(data.get("metadata"), dict) else {}
        for wanted, actual in ((self.api_version, data.get("apiVersion")), (self.kind, data.get("kind")), (self.name, meta.get("name")), (self.namespace, meta.get("namespace"))):
            if wanted is not None and (actual is None or _text(actual) != wanted):
                return False
        for wanted_map, key in ((self.labels, "labels"), (self.annotations, "annotations")):
            actual_map = meta.get(key) if isinstance(meta.get(key), dict) else {}
            if any(k not in actual_map or _text(actual_map[k]) != v for k, v in wanted_map.items()):
                return False
        return True


def _text(value: Any) -> str:
    """A scalar as YAML wrote it (`true`, not Python's `True`): kpt compares the written text."""
    return ("true" if value else "false") if isinstance(value, bool) else str(value)


def selected(resource: Resource | dict, selectors: Iterable[Selector], exclude: Iterable[Selector] = ()) -> bool:
    """Whether a step with these selectors and exclusions works on `resource`."""
    selectors = tuple(selectors)
    if selectors and not any(s.matches(resource) for s in selectors):
        return False
    return not any(s.matches(resource) for s in exclude)


def parse_list(value: Any, where: str) -> tuple[Selector, ...]:
    """A Kptfile step's `selectors:` or `exclude:` list."""
    if value is None:
        return ()
    if not isinstance(value, list):
        raise InputError(f"{where}: must be a list of selectors")
    return tuple(Selector.from_dict(entry, f"{where}[{n}]") for n, entry in enumerate(value))
