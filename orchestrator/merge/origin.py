"""Where each resource came from and which functions changed it (the origin/transformer
annotations proposal, applied to KRM functions).

Lineage is tracked beside the pipeline, not inside it: the tracker sees what each function was
sent and returned, so functions get the same input with or without `--origin-annotations`, and the
annotations are stamped once, on the rendered output."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .. import annotations as ann
from ..resource import Resource, held_once
from ..yamlio import fast, roundtrip, text

if TYPE_CHECKING:
    from ..select.functions import FunctionSpec


@dataclass
class Changes:
    """What one function did to the resources it was sent: (sent, returned, changed) pairs, and
    the resources it added and removed. A resource matches the one sent at its path and index
    when it is still that one (same identity), else the one sent with its identity (a function
    that moved, renumbered or swapped it), else the one sent at its place (a function that
    renamed it)."""

    pairs: list[tuple[Resource, Resource, bool]] = field(default_factory=list)
    added: list[Resource] = field(default_factory=list)
    removed: list[Resource] = field(default_factory=list)

    @property
    def changed(self) -> int:
        return sum(1 for _, _, changed in self.pairs if changed)


def compare(sent: list[Resource], returned: list[Resource]) -> Changes:
    """Pair a function's output with its input (cheap when texts are equal, as most are)."""
    by_key = held_once(((r.path, r.index), r) for r in sent)
    result = Changes()
    taken: set[int] = set()

    def pair(before: Resource, item: Resource, changed: bool | None = None) -> None:
        taken.add(id(before))
        result.pairs.append((before, item, _differs(before, item) if changed is None else changed))

    unmatched: list[Resource] = []
    for item in returned:
        before = by_key.get((item.path, item.index))
        if before is None or id(before) in taken:
            unmatched.append(item)
            continue
        changed = _differs(before, item)  # unchanged, it is the same resource: no identity to compute
        if changed and ann.identity(before.data) != ann.identity(item.data):
            unmatched.append(item)  # another resource at this place (a swap), or this one renamed: below
        else:
            pair(before, item, changed)
    if unmatched and len(taken) < len(sent):
        left = [r for r in sent if id(r) not in taken]
        by_identity = held_once((ann.identity(r.data), r) for r in left)
        still = []
        for item in unmatched:
            before = by_identity.pop(ann.identity(item.data), None)
            if before is None:
                still.append(item)
            else:
                pair(before, item)
        unmatched = []
        for item in still:
            before = by_key.get((item.path, item.index))
            if before is not None and id(before) not in taken:
                pair(before, item)
            else:
                unmatched.append(item)
    result.added, result.removed = unmatched, [r for r in sent if id(r) not in taken]
    return result


def _differs(before: Resource, after: Resource) -> bool:
    """Changed in value or moved to another file (fnrun's own path/index annotations aside)."""
    if before.path != after.path:
        return True
    if after is before:
        return False
    if before.fresh and after.fresh and before.text == after.text:  # a function's own text: cheap to compare
        return False
    return not roundtrip.same(before.value, after.value)  # a value handed back (no text to render for it)


@dataclass
class Lineage:
    """One resource's story: read from a file (origin path) or created by a function, then changed
    by some functions, in order."""

    origin: dict[str, Any]
    created_by: FunctionSpec | None = None
    changed_by: list[FunctionSpec] = field(default_factory=list)

    @property
    def transformations(self) -> list[dict[str, Any]]:
        return [reference(spec) for spec in self.changed_by]


def reference(spec: FunctionSpec) -> dict[str, Any]:
    """The proposal's `configuredIn` (declaring file) and `configuredBy` (the function config's
    object reference) for a function; a function given on the command line without --fn-config has
    only the reference of the ConfigMap fnrun built for it."""
    entry: dict[str, Any] = {}
    if spec.declared_in:
        entry["configuredIn"] = spec.declared_in
    config = spec.config.data if spec.config is not None else None
    if isinstance(config, dict):
        meta = given if isinstance(given := config.get("metadata"), dict) else {}
        by = {"apiVersion": config.get("apiVersion"), "kind": config.get("kind"), "name": meta.get("name")}
        if meta.get("namespace"):
            by["namespace"] = meta["namespace"]
        entry["configuredBy"] = {k: str(v) for k, v in by.items() if v is not None}
    return entry


def read_lineage(resource: Resource) -> Lineage:
    """The lineage of a resource as read: its existing origin annotation (from an upstream tool)
    when it has one, else the file it was read from."""
    existing = _load(ann.annotations_of(resource.data).get(ann.ORIGIN))
    if isinstance(existing, dict) and existing:
        return Lineage(existing)
    return Lineage({"path": resource.path} if resource.path else {})


@dataclass
class Removal:
    resource: Resource
    lineage: Lineage
    removed_by: FunctionSpec


class Tracker:
    """Follows lineage through a run: fed each function's Changes, keyed by the live Resource
    objects (so two resources can never be confused, whatever their paths)."""

    def __init__(self) -> None:
        self._live: dict[int, tuple[Resource, Lineage]] = {}
        self.removed: list[Removal] = []

    def transformed(self, spec: FunctionSpec, changes: Changes) -> None:
        for before, after, changed in changes.pairs:
            lineage = self._take(before)
            if changed:
                lineage.changed_by.append(spec)
            self._live[id(after)] = (after, lineage)
        for resource in changes.added:
            self._live[id(resource)] = (resource, Lineage(reference(spec), created_by=spec))
        for resource in changes.removed:
            self.removed.append(Removal(resource, self._take(resource), spec))

    def _take(self, resource: Resource) -> Lineage:
        found = self._live.pop(id(resource), None)
        return found[1] if found is not None else read_lineage(resource)

    def lineage(self, resource: Resource) -> Lineage:
        found = self._live.get(id(resource))
        return found[1] if found is not None and found[0] is resource else read_lineage(resource)


def annotate(resources: list[Resource], tracker: Tracker, origin: bool, transformations: bool) -> list[Resource]:
    """The rendered resources with `config.kubernetes.io/origin` and/or
    `config.kubernetes.io/transformations` stamped in (as block strings, like kustomize prints them)."""
    out = []
    for resource in resources:
        lineage = tracker.lineage(resource)
        current = ann.annotations_of(resource.data)
        entries: dict[str, str] = {}
        if origin and lineage.origin and (lineage.created_by is not None or ann.ORIGIN not in current):
            entries[ann.ORIGIN] = fast.dump(lineage.origin)
        if transformations and lineage.changed_by:
            before = _load(current.get(ann.TRANSFORMATIONS))
            entries[ann.TRANSFORMATIONS] = fast.dump((before if isinstance(before, list) else []) + lineage.transformations)
        out.append(with_block_annotations(resource, entries) if entries else resource)
    return out


def _load(value: Any) -> Any:
    if not isinstance(value, str):
        return None
    try:
        return fast.load(value, "annotation")
    except Exception:  # noqa: BLE001 - someone else's malformed annotation is simply not reused
        return None


_PLACEHOLDER = "fnrun-block-value-{}"


def with_block_annotations(resource: Resource, entries: dict[str, str]) -> Resource:
    """The resource with multi-line annotations set as `|` blocks: inserted as whole lines when
    its layout allows, else through the round-trip editor."""
    data = dict(resource.data)
    meta = dict(data["metadata"]) if isinstance(data.get("metadata"), dict) else {}
    meta["annotations"] = {**ann.annotations_of(resource.data), **entries}
    data["metadata"] = meta
    source = resource.text
    stamped = None
    if not any(key in ann.annotations_of(resource.data) for key in entries):
        node, _ = fast.parse(source, "rendered resource")
        placeholders = [(key, _PLACEHOLDER.format(n)) for n, key in enumerate(entries)]
        stamped = text.stamp(source, node, placeholders)
        if stamped is not None:
            stamped = _expand(stamped, entries)
            if fast.load(stamped, "rendered resource") != data:
                stamped = None
    if stamped is None:
        stamped = _roundtrip(source, entries)
    return Resource(data, stamped, None)


def _expand(stamped: str, entries: dict[str, str]) -> str:
    for n, (key, value) in enumerate(entries.items()):
        pattern = re.compile(rf"^( *){re.escape(key)}: {re.escape(_PLACEHOLDER.format(n))}\n", re.M)
        match = pattern.search(stamped)
        if match is None:
            return stamped
        indent = match.group(1) + "  "
        block = f"{match.group(1)}{key}: |\n" + "".join(f"{indent}{line}\n" if line else "\n" for line in value.splitlines())
        stamped = stamped[: match.start()] + block + stamped[match.end() :]
    return stamped


def _roundtrip(source: str, entries: dict[str, str]) -> str:
    from ruamel.yaml.comments import CommentedMap
    from ruamel.yaml.scalarstring import LiteralScalarString

    tree = roundtrip.load(source)
    meta = tree.get("metadata")
    if not isinstance(meta, dict):
        meta = tree["metadata"] = CommentedMap()
    annotations = meta.get("annotations")
    if not isinstance(annotations, dict):
        annotations = meta["annotations"] = CommentedMap()
    for key, value in entries.items():
        annotations[key] = LiteralScalarString(value)
    return roundtrip.dump(tree, roundtrip.detect_style(source))
