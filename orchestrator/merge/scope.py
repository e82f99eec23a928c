"""Between the runtime and the package: what a function sees, and how its output is folded back.

Out-of-scope and unselected resources pass through untouched; the declaring resource travels as
functionConfig; path/index twins are reconciled; new resources get the default path of the
function's directory (in render, its config's; a render step's paths are relative to its package)."""

from __future__ import annotations

import posixpath
from collections import Counter
from dataclasses import replace

from .. import annotations as ann
from ..errors import FunctionError
from ..read.package import stamped
from ..resource import Resource, held_once, set_annotations
from ..select.functions import FunctionSpec, in_scope
from ..select.selectors import selected
from ..yamlio import fast
from ..yamlio.text import quote


def split(spec: FunctionSpec, resources: list[Resource]) -> tuple[list[Resource], list[int]]:
    """The items a function receives and their positions in `resources`: those in its scope and
    chosen by its selectors (kpt's `selectors`/`exclude`, `run --match-*/--exclude-*`), its own
    config excluded (docs/reference/declaring-functions.md; for render too, as kpt since kptdev/kpt#4673) unless it is
    an item too (`run --fn-config` of a file in the package, as kpt fn eval). The others pass
    through untouched."""
    items, positions = [], []
    config = None if spec.config_also_item else spec.config
    config_at = (config.path, config.index) if config is not None and config.path is not None else None
    for position, resource in enumerate(resources):
        if resource is config or (config_at is not None and (resource.path, resource.index) == config_at):
            continue
        if in_scope(spec, resource.path) and (not (spec.selectors or spec.exclude) or selected(resource, spec.selectors, spec.exclude)):
            items.append(resource)
            positions.append(position)
    return items, positions


def receiver(specs: list[FunctionSpec], path: str, data: object) -> str | None:
    """The first function that would receive the document `data` at `path` (by scope and
    selectors, as `split` decides), or None: for documents the reader could not read faithfully."""
    resource = Resource(data if isinstance(data, dict) else {})
    for spec in specs:
        if in_scope(spec, path) and (not (spec.selectors or spec.exclude) or selected(resource, spec.selectors, spec.exclude)):
            return f"function {spec.name} would receive"
    return None


def taken_twice(resources: list[Resource]) -> tuple[str, int] | None:
    """A (path, index) two resources claim, if any: kpt's render refuses a function that makes one."""
    seen: set[tuple[str, int]] = set()
    for resource in resources:
        if resource.path is None:
            continue
        path = resource.path
        place = (posixpath.normpath(path) if "./" in path or "//" in path else path, resource.index)
        if place in seen:
            return place
        seen.add(place)
    return None


def merge_back(resources: list[Resource], positions: list[int], output: list[Resource]) -> list[Resource]:
    """Replace the in-scope resources by the function's output, where the first of them stood."""
    if not positions:
        return resources + output
    taken = set(positions)
    merged = resources[: positions[0]] + output
    merged += [r for p, r in enumerate(resources) if p > positions[0] and p not in taken]
    return merged


def as_handed(spec: FunctionSpec, items: list[Resource], package_paths: bool) -> tuple[FunctionSpec, list[Resource]]:
    """The spec and items as the function receives them: with `package_paths` (render), the
    paths of the items and of the config are relative to the step's package, as kpt hands them.
    The run and the start-up's cache probe both build the input through it, so they agree."""
    if not package_paths or not spec.directory:
        return spec, items
    config = spec.config
    if config is not None and config.path is not None:
        spec = replace(spec, config=package_relative(spec, [config])[0])
    return spec, package_relative(spec, items)


def package_relative(spec: FunctionSpec, resources: list[Resource]) -> list[Resource]:
    """The resources with their paths relative to the step's package, as kpt's render hands a
    subpackage's step its items (and its config); `reconcile` with `package_paths` takes the
    function's paths back to the root's."""
    prefix = spec.directory + "/" if spec.directory else ""
    if not prefix:
        return resources
    rebased = []
    for resource in resources:
        path = resource.path
        if path is not None and path.startswith(prefix):
            inner = path[len(prefix):]
            resource = _with_annotations(resource, {ann.PATH: inner, ann.INTERNAL_PATH: inner})
        rebased.append(resource)
    return rebased


def reconcile(spec: FunctionSpec, sent: list[Resource], output: list[Resource], naming: str = "name_kind",
              package_paths: bool = False) -> list[Resource]:
    """Make each output item's path/index twins agree (docs/reference/annotations.md) and give new items a path
    (`naming`: annotations.FILE_NAMES). With `package_paths`, as kpt's render: `sent` and the
    output hold paths relative to the step's package (`package_relative`), which are taken back
    to the root's; a path a function wrote as absolute (`/another/out.yaml`) is taken below the
    package; a new item without a path goes to its function config's directory (kyaml's default)."""
    sent_by_identity = _unique_identities(sent)
    directory = _new_items_directory(spec) if package_paths else spec.directory
    new_paths: Counter[str] = Counter()
    result = []
    for item in output:
        data = item.data
        original = sent_by_identity.get(ann.identity(data))
        fixes = {}
        for public, internal in ((ann.PATH, ann.INTERNAL_PATH), (ann.INDEX, ann.INTERNAL_INDEX)):
            value = _twin(spec, data, public, internal, original)
            if value is not None:
                fixes[public] = fixes[internal] = value
        if package_paths:
            _in_package(spec, data, fixes)
        if ann.PATH not in fixes and ann.get_path(data) is None:
            path = ann.default_path(data, directory, naming)
            fixes[ann.PATH] = fixes[ann.INTERNAL_PATH] = path
            fixes[ann.INDEX] = fixes[ann.INTERNAL_INDEX] = str(new_paths[path])
            new_paths[path] += 1
        result.append(_with_annotations(item, fixes) if fixes else item)
    return result


def _in_package(spec: FunctionSpec, data: dict, fixes: dict[str, str]) -> None:
    """A package-relative path (`package_relative`) made the root's, in both twins; an absolute
    one is taken below the package. A relative one is joined as it is, so that a `..` in it is
    still refused by the write-back's checks."""
    path = fixes.get(ann.PATH, ann.get_path(data))
    if path is None:
        return
    if path.startswith("/"):
        fixes[ann.PATH] = fixes[ann.INTERNAL_PATH] = posixpath.normpath(posixpath.join(spec.directory, path.lstrip("/")))
    elif spec.directory:
        fixes[ann.PATH] = fixes[ann.INTERNAL_PATH] = f"{spec.directory}/{path}"


def _new_items_directory(spec: FunctionSpec) -> str:
    """Where kpt's render puts a new item without a path: its function config's directory when
    the config is a file of the package (`configPath`), else the step's package."""
    config = spec.config
    if spec.config_in_package and config is not None and config.path is not None:
        return posixpath.dirname(config.path)
    return spec.directory


def _unique_identities(resources: list[Resource]) -> dict[tuple[str, str, str, str], Resource]:
    """Resources by identity, those sharing one left out; each identity is computed once, not
    three times (a third of reconcile's time on 10,000 items)."""
    return held_once((ann.identity(r.data), r) for r in resources)


def _twin(spec: FunctionSpec, data: dict, public: str, internal: str, original: Resource | None) -> str | None:
    """The value both twins should hold, or None when they already agree."""
    annotations = ann.annotations_of(data)
    a, b = annotations.get(public), annotations.get(internal)
    if a is None and b is None:
        return None
    if a is None or b is None:
        return str(b if a is None else a)
    if str(a) == str(b):
        return None
    before = ann.annotations_of(original.data).get(public) if original else None
    if before is not None and str(a) == str(before):
        return str(b)
    if before is not None and str(b) == str(before):
        return str(a)
    meta = data.get("metadata") or {}
    raise FunctionError(
        f"function {spec.name} set {public} to {a!r} but {internal} to {b!r} on "
        f"{data.get('kind')}/{meta.get('name') if isinstance(meta, dict) else None}"
    )


def _with_annotations(item: Resource, fixes: dict[str, str]) -> Resource:
    """The item with annotations set in its value and, as whole lines where possible, its text.
    An item whose value was replaced after it was read (`fresh` False: a handed-over function's
    change) has a body that is only the base of its old text, so its text is rendered anew
    (`Resource.value_text`), and parsed once: the parse that checked the rendering is reused."""
    moved = _repathed(item, fixes)
    if moved is not None:
        return moved
    body, parsed = item.rendered_value()
    node, data = parsed if parsed is not None else fast.parse(body, "function output")
    return stamped(body, node, data, _merged_entries(item.data, fixes))


def _merged_entries(data: dict, fixes: dict[str, str]) -> list[tuple[str, str]]:
    """fnrun's annotations after the fixes, in the order the reader stamps them."""
    annotations = ann.annotations_of(data)
    entries = []
    for key in ann.STAMP_ORDER:
        value = fixes.get(key, annotations.get(key))
        if value is not None:
            entries.append((key, str(value)))
    return entries


def _repathed(item: Resource, fixes: dict[str, str]) -> Resource | None:
    """The item with only its path twins changed, by replacing the two lines fnrun stamped
    (render rebases every item of a subpackage's step twice: parsing each again would cost a
    third of such a render); None where the text is not fnrun's stamping, to be done in full."""
    if set(fixes) != {ann.PATH, ann.INTERNAL_PATH} or not item.fresh or item.body is None or "kubernetes.io/path" in item.body:
        return None
    annotations = ann.annotations_of(item.data)
    old, new = annotations.get(ann.PATH), fixes[ann.PATH]
    if not isinstance(old, str) or annotations.get(ann.INTERNAL_PATH) != old or fixes[ann.INTERNAL_PATH] != new:
        return None
    text = item.text
    for key in (ann.PATH, ann.INTERNAL_PATH):
        line = f" {key}: {quote(old)}\n"
        if text.count(line) != 1:
            return None
        text = text.replace(line, f" {key}: {quote(new)}\n")
    data = dict(item.data)
    set_annotations(data, [(ann.PATH, new), (ann.INTERNAL_PATH, new)])
    return Resource(data, text, item.body)
