"""A Kptfile step as the FunctionSpec fnrun's pipeline runs: image resolved, config chosen,
selectors carried, scope the Kptfile's directory."""

from __future__ import annotations

import posixpath
import shlex
import shutil
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..kinds import Kind
from ..resource import Resource
from ..select.functions import FunctionSpec
from .images import resolve
from .kptfile import Kptfile, Step, is_kptfile


def to_spec(step: Step, owner: Kptfile, resources: list[Resource], prefix: str, builtin_catalog: bool = False) -> FunctionSpec:
    common: dict[str, Any] = dict(
        config=_config(step, owner, resources),
        config_in_package=step.config_path is not None or step.config_ref is not None,
        declared_in=owner.path,
        selectors=step.selectors,
        exclude=step.exclude,
    )
    if step.image:
        return FunctionSpec(kind=Kind.CONTAINER, image=resolve(step.image, step.tag, prefix, step.where, builtin_catalog), **common)
    assert step.exec is not None
    try:
        words = shlex.split(step.exec)
    except ValueError as err:
        raise InputError(f"{step.where}: exec {step.exec!r}: {err}") from None
    if not words:
        raise InputError(f"{step.where}: exec is empty")
    return FunctionSpec(kind=Kind.EXEC, exec_path=_executable(words[0], step.where), args=tuple(words[1:]), **common)


def with_current_config(spec: FunctionSpec, resources: list[Resource]) -> FunctionSpec:
    """The spec with its package config as an earlier step left it: the config is a resource of
    the package, so another step before may have edited it (never the function itself: its own
    config is not among its items)."""
    config = spec.config
    if not spec.config_in_package or config is None or config.path is None:
        return spec
    for resource in resources:
        if resource is config:
            return spec
        if (resource.path, resource.index) == (config.path, config.index):
            return replace(spec, config=resource)
    return spec


def _executable(word: str, where: str) -> str:
    """As kpt runs `exec:`: a path is relative to where fnrun runs, a bare name is looked up on PATH."""
    if "/" in word:
        return str(Path(word).absolute())
    found = shutil.which(word)
    if found is None:
        raise InputError(f"{where}: exec {word!r} is not on PATH")
    return found


def _config(step: Step, owner: Kptfile, resources: list[Resource]) -> Resource | None:
    if step.config_map:  # `configMap: {}` gives no config at all, as kpt reads it
        return Resource({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "function-input"}, "data": dict(step.config_map)})
    if step.config_path is not None:
        path = posixpath.normpath(posixpath.join(owner.directory, step.config_path))
        if _in_subpackage(path, owner, resources):
            raise InputError(f"{step.where}: configPath {step.config_path} is in a subpackage; a step's config must belong to its own package")
        found = [r for r in resources if r.path == path]
        if len(found) != 1:
            what = "no resource" if not found else f"{len(found)} resources"
            raise InputError(f"{step.where}: configPath {step.config_path}: {what} at {path} (it must hold exactly one)")
        if not (found[0].data.get("metadata") or {}).get("name"):
            raise InputError(f"{step.where}: configPath {step.config_path}: the resource has no metadata.name (kpt requires one)")
        return found[0]
    if step.config_ref is not None:
        return _referenced(step, owner, resources)
    return None


def _in_subpackage(path: str, owner: Kptfile, resources: list[Resource]) -> bool:
    """Whether `path` lies under a directory, below the owner's, that holds its own Kptfile."""
    directories = {posixpath.dirname(r.path or "") for r in resources if is_kptfile(r)} - {owner.directory}
    parent = posixpath.dirname(path)
    while parent and parent != owner.directory:
        if parent in directories:
            return True
        parent = posixpath.dirname(parent)
    return False


def _referenced(step: Step, owner: Kptfile, resources: list[Resource]) -> Resource:
    ref = step.config_ref or {}
    unknown = sorted(set(ref) - {"apiVersion", "kind", "name", "namespace"})
    if unknown or "name" not in ref:
        raise InputError(f"{step.where}: configRef needs name (and may give apiVersion, kind, namespace), not {unknown or list(ref)}")
    prefix = owner.directory + "/" if owner.directory else ""
    matches = []
    for resource in resources:
        meta = given if isinstance(given := resource.data.get("metadata"), dict) else {}
        if not (resource.path or "").startswith(prefix):
            continue
        if all(ref.get(k) in (None, v) for k, v in (("apiVersion", resource.data.get("apiVersion")), ("kind", resource.data.get("kind")),
                                                     ("name", meta.get("name")), ("namespace", meta.get("namespace")))):
            matches.append(resource)
    if len(matches) != 1:
        what = "no resource" if not matches else f"{len(matches)} resources"
        raise InputError(f"{step.where}: configRef {ref}: {what} in the package match (it must name exactly one)")
    return matches[0]
