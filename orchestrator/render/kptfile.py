"""The Kptfile's pipeline as plain values: every mistake is one line naming the Kptfile and step."""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field
from typing import Any

from ..errors import InputError
from ..resource import Resource
from ..select import Selector

API_VERSION = "kpt.dev/v1"
BFS = "kpt.dev/bfs-rendering"
SAVE_ON_FAILURE = "kpt.dev/save-on-render-failure"
_STEP_KEYS = {"name", "image", "exec", "tag", "configPath", "configMap", "configRef", "selectors", "exclude", "when"}


@dataclass(frozen=True)
class Step:
    """One pipeline entry (kpt's `Function`)."""

    where: str  # e.g. "app/Kptfile: pipeline.mutators[0]"
    validator: bool
    image: str | None = None
    exec: str | None = None
    tag: str | None = None
    name: str | None = None
    config_path: str | None = None
    config_map: dict[str, str] | None = None
    config_ref: dict[str, str] | None = None
    selectors: tuple[Selector, ...] = ()
    exclude: tuple[Selector, ...] = ()
    when: str | None = None


@dataclass(frozen=True)
class Kptfile:
    path: str  # package-relative path of the Kptfile
    resource: Resource
    steps: tuple[Step, ...] = ()
    annotations: dict[str, str] = field(default_factory=dict)

    @property
    def directory(self) -> str:
        return posixpath.dirname(self.path)

    def flag(self, key: str) -> bool:
        return str(self.annotations.get(key, "")).lower() == "true"


def is_kptfile(resource: Resource) -> bool:
    path = resource.path or ""
    return resource.data.get("kind") == "Kptfile" and posixpath.basename(path) == "Kptfile"


def parse(resource: Resource) -> Kptfile:
    """The Kptfile's pipeline; a Kptfile kpt would refuse is refused first, with its file and line."""
    path = resource.path or "Kptfile"
    data = resource.data
    if data.get("apiVersion") != API_VERSION:
        raise InputError(f"{path}: apiVersion must be {API_VERSION}, not {data.get('apiVersion')!r}")
    _check_schema(resource, path)
    meta = data.get("metadata")
    annotations = meta.get("annotations") if isinstance(meta, dict) else None
    annotations = {str(k): str(v) for k, v in annotations.items()} if isinstance(annotations, dict) else {}
    pipeline = data.get("pipeline") or {}
    if not isinstance(pipeline, dict):
        raise InputError(f"{path}: pipeline must be a mapping with mutators and validators")
    unknown = sorted(set(pipeline) - {"mutators", "validators"})
    if unknown:
        raise InputError(f"{path}: pipeline: unknown key {unknown[0]!r} (known: mutators, validators)")
    steps: list[Step] = []
    for section in ("mutators", "validators"):
        entries = pipeline.get(section) or []
        if not isinstance(entries, list):
            raise InputError(f"{path}: pipeline.{section} must be a list")
        # an empty entry (`-` alone) is no step: kpt's decoder drops it too
        steps += [_step(entry, f"{path}: pipeline.{section}[{i}]", section == "validators") for i, entry in enumerate(entries) if entry is not None]
    return Kptfile(path, resource, tuple(steps), annotations)


def pipeline_step_count(resources: list[Resource]) -> int:
    """How many steps the Kptfile pipelines among `resources` declare (0 without a Kptfile)."""
    return sum(len(parse(r).steps) for r in resources if is_kptfile(r))


def _check_schema(resource: Resource, path: str) -> None:
    """kpt's schema over the document as written; lines count from the top of the file (the text
    before the first document is known; a later document's lines count from its own start)."""
    from ..yamlio import fast
    from .schema import check

    text = resource.body
    if text is None:
        return
    offset = resource.prefix.count("\n") if resource.index == 0 else 0
    check(fast.compose(text, path), path, offset)


def _step(entry: Any, where: str, validator: bool) -> Step:
    if not isinstance(entry, dict):
        raise InputError(f"{where} must be a mapping")
    unknown = sorted(str(k) for k in entry if k not in _STEP_KEYS)
    if unknown:
        raise InputError(f"{where}: unknown key {unknown[0]!r} (known: {', '.join(sorted(_STEP_KEYS))})")
    image, exec_ = _opt_str(entry, "image", where), _opt_str(entry, "exec", where)
    if bool(image) == bool(exec_):
        raise InputError(f"{where}: give exactly one of image or exec")
    if image:
        _check_reference(image, where)
    configs = [k for k in ("configPath", "configMap", "configRef") if entry.get(k) is not None]
    if len(configs) > 1:
        raise InputError(f"{where}: give only one of configPath, configMap or configRef, not {' and '.join(configs)}")
    config_path = _opt_str(entry, "configPath", where)
    if config_path is not None and posixpath.isabs(config_path):
        raise InputError(f"{where}: configPath {config_path!r} must be relative to the Kptfile's directory")
    if config_path is not None and posixpath.normpath(config_path).split("/")[0] == "..":
        raise InputError(f"{where}: configPath {config_path!r} points outside the package")
    return Step(
        where=where,
        validator=validator,
        image=image,
        exec=exec_,
        tag=_opt_str(entry, "tag", where),
        name=_opt_str(entry, "name", where),
        config_path=config_path,
        config_map=_str_map(entry.get("configMap"), f"{where}: configMap"),
        config_ref=_str_map(entry.get("configRef"), f"{where}: configRef"),
        selectors=tuple(Selector.from_dict(s, f"{where}: selectors[{i}]") for i, s in enumerate(_list(entry, "selectors", where))),
        exclude=tuple(Selector.from_dict(s, f"{where}: exclude[{i}]") for i, s in enumerate(_list(entry, "exclude", where))),
        when=_opt_str(entry, "when", where),
    )


def _opt_str(entry: dict, key: str, where: str) -> str | None:
    value = entry.get(key)
    if value is None:
        return None
    if isinstance(value, (dict, list)) or isinstance(value, bool):
        raise InputError(f"{where}: {key} must be a string")
    return str(value)


def _list(entry: dict, key: str, where: str) -> list:
    value = entry.get(key) or []
    if not isinstance(value, list):
        raise InputError(f"{where}: {key} must be a list")
    return value


def _str_map(value: Any, where: str) -> dict[str, str] | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        raise InputError(f"{where} must be a mapping")
    out = {}
    for k, v in value.items():
        if isinstance(v, (dict, list)):
            raise InputError(f"{where}.{k} must be a string")
        out[str(k)] = "true" if v is True else "false" if v is False else "" if v is None else str(v)
    return out


_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789._-")
_TAG_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")


def _check_reference(image: str, where: str) -> None:
    """An image reference as kpt parses it (distribution's grammar, in one linear pass): a
    registry host, lowercase path components, an optional tag and digest. kpt refuses
    `UPPER/Case:v1` before running anything; so does fnrun, naming the step."""
    name, _, digest = image.partition("@")
    components = name.split("/")
    last, colon, tag = components[-1].partition(":")
    components[-1] = last
    host = components[0] if len(components) > 1 and ("." in components[0] or ":" in components[0] or components[0] == "localhost") else None
    paths = components[1:] if host is not None else components
    ok = all(part and set(part) <= _NAME_CHARS and part[0].isalnum() and part[-1].isalnum() for part in paths)
    ok = ok and (not colon or (0 < len(tag) <= 128 and set(tag) <= _TAG_CHARS and tag[0] not in ".-"))
    ok = ok and (not digest or (":" in digest and all(digest.partition(":")[::2])))
    if host is not None:
        ok = ok and all(c.isalnum() or c in ".-:[]" for c in host)
    if not ok:
        raise InputError(f"{where}: image {image!r} is not a valid image reference (lowercase name, optional :tag, @digest)")
