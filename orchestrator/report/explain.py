"""`fnrun explain DIR RESOURCE`: where one resource of the rendered package came from and which
functions changed it, told from the lineage the tracker followed through the run."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from .. import annotations as ann
from ..errors import InputError

if TYPE_CHECKING:
    from ..merge.origin import Lineage, Tracker
    from ..resource import Resource
    from ..select.functions import FunctionSpec


@dataclass(frozen=True)
class Selector:
    """`KIND/NAME`, `KIND/NAMESPACE/NAME`, with an optional apiVersion in front
    (`apps/v1/Deployment/ns/web`, `v1/ConfigMap/cm`)."""

    kind: str
    name: str
    namespace: str | None = None
    api_version: str | None = None

    def matches(self, data: dict) -> bool:
        group, kind, namespace, name = ann.identity(data)
        if kind.lower() != self.kind.lower() or name != self.name:
            return False
        if self.namespace is not None and namespace != self.namespace:
            return False
        return self.api_version is None or str(data.get("apiVersion")) == self.api_version

    def __str__(self) -> str:
        return "/".join(p for p in (self.api_version, self.kind, self.namespace, self.name) if p)


def parse_selector(value: str) -> Selector:
    """The kind is the part that starts with a capital letter (kinds are CamelCase; apiVersions and
    namespaces are lowercase); all-lowercase input is read as KIND/NAME or KIND/NAMESPACE/NAME."""
    parts = value.strip("/").split("/")
    if len(parts) < 2 or any(not p for p in parts):
        raise InputError(f"resource {value!r}: expected KIND/NAME, KIND/NAMESPACE/NAME or APIVERSION/KIND/[NAMESPACE/]NAME")
    capital = [n for n, part in enumerate(parts) if part[:1].isupper()]
    at = capital[0] if capital else 0 if len(parts) <= 3 else -1
    rest = parts[at + 1 :]
    if at < 0 or at > 2 or len(rest) not in (1, 2):
        raise InputError(f"resource {value!r}: cannot tell the kind; write it capitalised, like Deployment/web or apps/v1/Deployment/ns/web")
    return Selector(kind=parts[at], name=rest[-1], namespace=rest[0] if len(rest) == 2 else None, api_version="/".join(parts[:at]) or None)


def explain(wanted: Selector, resources: list[Resource], tracker: Tracker) -> str:
    """The story of the one resource `wanted` selects (exit 2 when it selects none or several)."""
    found = [r for r in resources if wanted.matches(r.data)]
    if len(found) > 1:
        where = ", ".join(_title(r.data) for r in found)
        raise InputError(f"{wanted} matches {len(found)} resources ({where}); add the namespace or apiVersion")
    if found:
        return _story(found[0], tracker.lineage(found[0]))
    removed = [gone for gone in tracker.removed if wanted.matches(gone.resource.data)]
    if removed:
        gone = removed[-1]
        return _story(gone.resource, gone.lineage) + f"  removed by {_function(gone.removed_by)}\n"
    raise InputError(f"no {wanted} in the rendered package ({len(resources)} resources); `fnrun run DIR --output -` shows them all")


def _title(data: dict) -> str:
    _group, kind, namespace, name = ann.identity(data)
    return f"{kind}/{namespace + '/' if namespace else ''}{name} ({data.get('apiVersion')})"


def _story(resource: Resource, lineage: Lineage) -> str:
    lines = [f"{_title(resource.data)} in {resource.path or '(no file)'}"]
    if lineage.created_by is not None:
        lines.append(f"  created by {_function(lineage.created_by)}")
    elif lineage.origin.get("path"):
        lines.append(f"  read from {lineage.origin['path']}")
    else:
        lines.append("  origin: " + ", ".join(f"{k}: {v}" for k, v in lineage.origin.items()) if lineage.origin else "  origin unknown (no path)")
    if lineage.changed_by:
        lines.append("  changed by:")
        lines += [f"    {n}. {_function(spec)}" for n, spec in enumerate(lineage.changed_by, 1)]
    else:
        lines.append("  not changed by any function")
    return "\n".join(lines) + "\n"


def _function(spec: FunctionSpec) -> str:
    """`IMAGE (configured in FILE by KIND/NAME)`."""
    from ..merge.origin import reference

    entry = reference(spec)
    by = entry.get("configuredBy") or {}
    configured = [f"in {entry['configuredIn']}"] if entry.get("configuredIn") else ["on the command line"]
    if by and entry.get("configuredIn"):
        configured.append(f"by {by.get('kind')}/{str(by.get('namespace')) + '/' if by.get('namespace') else ''}{by.get('name')}")
    return f"{spec.name} (configured {' '.join(configured)})"
