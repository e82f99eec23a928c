"""kpt's resource selectors: the `selectors`/`exclude` of a Kptfile pipeline step and the
`--match-*`/`--exclude-*` flags of `kpt fn eval`.

Semantics follow kpt (pkg/fn/runtime/utils.go): every given field must equal the resource's
(exact strings; apiVersion is compared whole, `apps/v1` not `apps`); an unset field matches
anything, so a resource without a namespace can only be matched by a selector with no namespace;
labels/annotations must all be present with equal values. Selectors are OR'd, an empty list
selects everything; an exclusion that sets no field excludes nothing. Unlike kpt, a resource
matched by two selectors is selected once (kpt sends it to the function twice)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import InputError
from ..resource import Resource

_SCALARS = {"apiVersion": "api_version", "kind": "kind", "name": "name", "namespace": "namespace"}
_MAPS = ("labels", "annotations")


@dataclass(frozen=True)
class Selector:
    api_version: str | None = None
    kind: str | None = None
    name: str | None = None
    namespace: str | None = None
    labels: dict[str, str] = field(default_factory=dict)
    annotations: dict[str, str] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, d: Any, where: str) -> Selector:
        """A selector from its Kptfile form; `where` names the file and step for errors."""
        if not isinstance(d, Mapping):
            raise InputError(f"{where}: a selector must be a mapping, not {_describe(d)}")
        values: dict[str, Any] = {}
        for key, value in d.items():
            if key in _SCALARS:
                if value is not None:
                    values[_SCALARS[key]] = _text(value, f"{where}: selector {key}")
            elif key in _MAPS:
                values[key] = _string_map(value, f"{where}: selector {key}")
            else:
                known = ", ".join([*_SCALARS, *_MAPS])
                raise InputError(f"{where}: unknown selector field {key!r} (known: {known})")
        return cls(**values)

    @property
    def empty(self) -> bool:
        """True when no field is set (kpt ignores such an exclusion)."""
        return not (self.api_version or self.kind or self.name or self.namespace or self.labels or self.annotations)

    def matches(self, resource: Resource) -> bool:
        """All fields set here hold for `resource`."""
        data = resource.data
        meta = data.get("metadata")
        meta = meta if isinstance(meta, dict) else {}
        for wanted, actual in (
            (self.api_version, data.get("apiVersion")),
            (self.kind, data.get("kind")),
            (self.name, meta.get("name")),
            (self.namespace, meta.get("namespace")),
        ):
            if wanted and wanted != _scalar(actual):
                return False
        for wanted_map, key in ((self.labels, "labels"), (self.annotations, "annotations")):
            if wanted_map:
                actual_map = meta.get(key)
                actual_map = actual_map if isinstance(actual_map, dict) else {}
                for k, v in wanted_map.items():
                    if k not in actual_map or _scalar(actual_map[k]) != v:
                        return False
        return True


def selected(resource: Resource, selectors: Sequence[Selector], exclude: Sequence[Selector]) -> bool:
    """Whether a step sees `resource`: any selector matches (none given: all do), no exclusion does."""
    if selectors and not any(s.matches(resource) for s in selectors):
        return False
    return not any(not e.empty and e.matches(resource) for e in exclude)


def _scalar(value: Any) -> str | None:
    """A YAML scalar as the string kpt compares (`true`, not Python's `True`)."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _text(value: Any, where: str) -> str:
    if isinstance(value, (Mapping, list)):
        raise InputError(f"{where} must be a string, not {_describe(value)}")
    return _scalar(value) or ""


def _string_map(value: Any, where: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise InputError(f"{where} must be a mapping of strings, not {_describe(value)}")
    return {str(k): _text(v, f"{where}.{k}") for k, v in value.items()}


def _describe(value: Any) -> str:
    names: dict[type, str] = {dict: "a mapping", list: "a list"}
    return names.get(type(value), f"{type(value).__name__} {value!r}")
