"""A kpt package's Kptfile pipeline, read strictly: every mistake is one line naming the Kptfile."""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass
from typing import Any

from ..errors import InputError
from ..resource import Resource
from ..select.selectors import Selector, parse_list

KPTFILE = "Kptfile"
DEFAULT_IMAGE_PREFIX = "ghcr.io/kptdev/krm-functions-catalog/"
_STEP_KEYS = {"name", "image", "exec", "tag", "configPath", "configMap", "configRef", "selectors", "exclude", "when"}
_SUPPORTED_API = ("kpt.dev/v1",)


@dataclass(frozen=True)
class Step:
    """One function of a pipeline, as written (images not yet expanded)."""

    kptfile: str  # package-relative path of the Kptfile
    validator: bool
    position: int
    name: str | None = None
    image: str | None = None
    exec_argv: tuple[str, ...] = ()
    config_path: str | None = None
    config_map: dict | None = None
    selectors: tuple[Selector, ...] = ()
    exclude: tuple[Selector, ...] = ()

    @property
    def where(self) -> str:
        section = "validators" if self.validator else "mutators"
        return f"{self.kptfile}: pipeline.{section}[{self.position}]"


@dataclass(frozen=True)
class Pipeline:
    kptfile: str
    mutators: tuple[Step, ...]
    validators: tuple[Step, ...]


def parse(resource: Resource) -> Pipeline:
    data = resource.data
    path = resource.path or KPTFILE
    if data.get("apiVersion") not in _SUPPORTED_API:
        raise InputError(f"{path}: Kptfile apiVersion {data.get('apiVersion')!r} is not supported (use {', '.join(_SUPPORTED_API)})")
    pipeline = data.get("pipeline") or {}
    if not isinstance(pipeline, dict):
        raise InputError(f"{path}: pipeline must be a mapping")
    unknown = sorted(set(map(str, pipeline)) - {"mutators", "validators"})
    if unknown:
        raise InputError(f"{path}: pipeline: unknown field {unknown[0]!r} (allowed: mutators, validators)")
    return Pipeline(path, _steps(pipeline.get("mutators"), path, False), _steps(pipeline.get("validators"), path, True))


def _steps(value: Any, path: str, validator: bool) -> tuple[Step, ...]:
    section = "validators" if validator else "mutators"
    if value is None:
        return ()
    if not isinstance(value, list):
        raise InputError(f"{path}: pipeline.{section} must be a list")
    return tuple(_step(entry, path, validator, position) for position, entry in enumerate(value))


def _step(entry: Any, path: str, validator: bool, position: int) -> Step:
    where = f"{path}: pipeline.{'validators' if validator else 'mutators'}[{position}]"
    if not isinstance(entry, dict):
        raise InputError(f"{where}: must be a mapping")
    unknown = sorted(set(map(str, entry)) - _STEP_KEYS)
    if unknown:
        raise InputError(f"{where}: unknown field {unknown[0]!r} (allowed: {', '.join(sorted(_STEP_KEYS))})")
    for unsupported in ("tag", "configRef", "when"):
        if unsupported in entry:
            raise InputError(f"{where}: {unsupported!r} (kpt 1.0) is not supported by fnrun render yet")
    image, exec_ = entry.get("image"), entry.get("exec")
    if bool(image) == bool(exec_):
        raise InputError(f"{where}: give exactly one of image and exec")
    sources = [k for k in ("configPath", "configMap") if entry.get(k) is not None]
    if len(sources) > 1:
        raise InputError(f"{where}: give at most one of configPath and configMap")
    config_path = entry.get("configPath")
    if config_path is not None:
        config_path = str(config_path)
        if os.path.isabs(config_path) or ".." in config_path.split("/"):
            raise InputError(f"{where}: configPath {config_path!r} must be a path inside the package")
    config_map = entry.get("configMap")
    if config_map is not None and not isinstance(config_map, dict):
        raise InputError(f"{where}: configMap must be a mapping")
    try:
        argv = tuple(shlex.split(str(exec_))) if exec_ else ()
    except ValueError as err:
        raise InputError(f"{where}: exec: {err}") from None
    return Step(
        kptfile=path,
        validator=validator,
        position=position,
        name=None if entry.get("name") is None else str(entry["name"]),
        image=None if not image else str(image),
        exec_argv=argv,
        config_path=config_path,
        config_map=None if config_map is None else {str(k): _string(v) for k, v in config_map.items()},
        selectors=parse_list(entry.get("selectors"), f"{where}.selectors"),
        exclude=parse_list(entry.get("exclude"), f"{where}.exclude"),
    )


def _string(value: Any) -> str:
    from ..envvars import scalar_text

    return scalar_text(value)


def expand_image(image: str, prefix: str) -> str:
    """kpt's short names: an image without `/` is a catalog function under `prefix`; no tag or
    digest means `:latest`."""
    if "/" not in image:
        image = prefix.rstrip("/") + "/" + image
    last = image.rsplit("/", 1)[-1]
    if ":" not in last and "@" not in last:
        image += ":latest"
    return image
