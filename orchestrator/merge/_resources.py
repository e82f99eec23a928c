"""Merges of whole resources and of resource lists (packages), matched by identity."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from copy import deepcopy
from typing import Any

from orchestrator.annotations import STRIPPED_KEYS, annotations_of, identity, without_stripped
from orchestrator.errors import InputError
from orchestrator.merge._common import MISSING, MergeConflict, Where, describe, kind_of, same
from orchestrator.merge._fields import merge2_value, merge3_value

Identity = tuple[str, str, str, str]


@contextmanager
def _naming(resource: Any) -> Iterator[None]:
    """Conflicts found deep in the fields name the resource they happened in."""
    try:
        yield
    except MergeConflict as err:
        if err.resource or not isinstance(resource, dict):
            raise
        raise MergeConflict(err.path, err.reason, describe(resource)) from None


def _finish(merged: Any, dest: Any) -> Any:
    """The merged value as callers see it: None for "cleared", and dest's own fnrun annotations
    (path, index, layout) put back even if the other side cleared the map they lived in. The other
    side's were stripped before merging: where a resource lives belongs to the destination."""
    if merged is MISSING:
        return None
    placement = {key: value for key, value in annotations_of(dest).items() if key in STRIPPED_KEYS}
    metadata = merged.setdefault("metadata", {}) if placement and isinstance(merged, dict) else None
    if isinstance(metadata, dict):
        annotations = metadata.get("annotations")
        metadata["annotations"] = {**(annotations if isinstance(annotations, dict) else {}), **placement}
    return merged


def merge2(src: Any, dest: Any) -> Any:
    """Merge `src` into `dest` (one resource, or any YAML value) by the seed's 2-way rules; the
    result keeps dest's path and index annotations. A null `src` clears: the result is None."""
    with _naming(dest):
        return _finish(merge2_value(without_stripped(src), dest, Where(kind_of(dest, src))), dest)


def merge3(original: Any, updated: Any, dest: Any) -> Any:
    """Apply the original → updated change to `dest` by the seed's 3-way rules. `original=None`
    means there is no common ancestor: everything in `updated` counts as added upstream."""
    with _naming(dest):
        o, u = without_stripped(original), without_stripped(updated)
        return _finish(merge3_value(o, u, dest, Where(kind_of(dest, updated, original))), dest)


def _by_identity(resources: list[dict], role: str) -> dict[Identity, dict]:
    """Resources keyed by identity, in list order; one identity twice cannot be matched."""
    found: dict[Identity, dict] = {}
    for resource in resources:
        if not isinstance(resource, dict):
            raise InputError(f"{role}: not a resource (a YAML {type(resource).__name__})")
        key = identity(resource)
        if key in found:
            raise InputError(f"{role}: two resources are {describe(found[key])} and {describe(resource)}")
        found[key] = resource
    return found


def merge2_resources(src: list[dict], dest: list[dict]) -> list[dict]:
    """Each dest resource merged with its src match (or kept) in dest order, then src's new ones
    in src order with the path they had in src."""
    sources, dests = _by_identity(src, "source"), _by_identity(dest, "destination")
    merged = [merge2(sources[key], resource) if key in sources else deepcopy(resource) for key, resource in dests.items()]
    return merged + [deepcopy(resource) for key, resource in sources.items() if key not in dests]


def merge3_resources(original: list[dict], updated: list[dict], dest: list[dict]) -> list[dict]:
    """The seed's resource rules, in dest order then upstream's additions in updated order:
    - in updated and dest: fields merged with merge3 (original=None when upstream added it anew);
    - in original, gone from updated: deleted from dest, unless dest changed it (fnrun's placement
      annotations aside); a local edit shows the user adopted it, so it is kept as dest has it
      rather than silently losing the edit (deleting by hand is easy, recovering an edit is not);
    - in updated only: added, with the path it has upstream;
    - in original and updated but not in dest: the user deleted it, so it stays deleted;
    - only in dest: kept unchanged.
    """
    ancestors = _by_identity(original, "original")
    upstream = _by_identity(updated, "updated")
    dests = _by_identity(dest, "destination")
    merged = []
    for key, resource in dests.items():
        if key in upstream:
            merged.append(merge3(ancestors.get(key), upstream[key], resource))
        elif key not in ancestors or _changed_locally(ancestors[key], resource):
            merged.append(deepcopy(resource))
    added = [resource for key, resource in upstream.items() if key not in dests and key not in ancestors]
    return merged + deepcopy(added)


def _changed_locally(original: dict, dest: dict) -> bool:
    return not same(without_stripped(original), without_stripped(dest))
