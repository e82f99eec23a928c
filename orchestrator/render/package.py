"""`fnrun render`: a kpt package's Kptfile pipelines, run with kpt's depth-first semantics through
the same per-function path as `fnrun run` (scope → runtime → reconcile → merge back) and the same
all-or-nothing write-back.

Depth-first: every subpackage (a directory below with its own Kptfile) renders before its parent,
siblings in name order; a package's functions see its own resources and everything its
subpackages rendered, which is exactly a function scoped to the package's directory run after the
functions of the directories below it. Kptfiles are resources of their packages, as in kpt.
"""

from __future__ import annotations

import os
import posixpath
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import InputError
from ..functions import FunctionSpec
from ..reader import Package, read_file, read_package
from ..resource import Resource
from .kptfile import DEFAULT_IMAGE_PREFIX, KPTFILE, Pipeline, Step, expand_image, parse

if TYPE_CHECKING:
    from ..pipeline import Events, Outcome, RunOptions, RuntimeFor


def image_prefix(flag: str | None) -> str:
    """--image-prefix, else $KPT_IMAGE_PREFIX, else kpt's catalog."""
    return flag or os.environ.get("KPT_IMAGE_PREFIX") or DEFAULT_IMAGE_PREFIX


def read_kpt_package(root: Path) -> Package:
    """The package as `run` reads it, plus every Kptfile. DIR is a kpt package (a Kptfile at its
    root) or a repository of them (every top-level package below it renders)."""
    kptfiles = _kptfiles(root) if root.is_dir() else []
    if not kptfiles:
        raise InputError(f"{root}: not a kpt package (no {KPTFILE} at its root or below)")
    package = read_package(root)
    for rel in kptfiles:
        source, resources = read_file(rel, (root / rel).read_bytes())
        package.files[rel] = source
        package.resources.extend(resources)
    return package


def _kptfiles(root: Path) -> list[str]:
    found = []
    for current, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        if KPTFILE in files:
            found.append(posixpath.join(Path(current).relative_to(root).as_posix(), KPTFILE).removeprefix("./"))
    return found


def pipelines(package: Package) -> dict[str, Pipeline]:
    """Package directory ('' for the root) → its pipeline."""
    found = {}
    for resource in package.resources:
        if resource.path is not None and posixpath.basename(resource.path) == KPTFILE and resource.data.get("kind") == "Kptfile":
            found[posixpath.dirname(resource.path)] = parse(resource)
    return found


def depth_first(directories: list[str]) -> list[str]:
    """Children before parents, siblings in name order (kpt's default render order). Without a
    root package ('' absent: a repository of packages), the top-level ones are siblings."""
    packages = set(directories)
    children: dict[str, list[str]] = {d: [] for d in packages | {""}}
    for directory in packages:
        if directory:
            children[_parent(directory, children)].append(directory)
    order: list[str] = []

    def visit(directory: str) -> None:
        for child in sorted(children[directory]):
            visit(child)
        order.append(directory)

    visit("")
    return [d for d in order if d in packages]


def _parent(directory: str, packages: dict[str, list[str]]) -> str:
    parent = posixpath.dirname(directory)
    while parent and parent not in packages:
        parent = posixpath.dirname(parent)
    return parent


def specs(package: Package, prefix: str, allow_network: bool, shard: tuple[int, int] | None = None) -> list[FunctionSpec]:
    """Every step of every pipeline (of the shard's packages), in render order, as the functions
    `run` knows how to run."""
    by_directory = pipelines(package)
    order = depth_first(sorted(by_directory))
    if shard is not None:
        from . import shard as sharding

        tops = sharding.top_level(list(by_directory))
        weights = {top: sum(1 for path in package.files if sharding.owner(posixpath.dirname(path), [top])) for top in tops}
        mine = sharding.share(tops, weights, *shard)
        order = [d for d in order if sharding.owner(d, tops) in mine]
    return [
        _spec(step, package, prefix, allow_network)
        for directory in order
        for step in (*by_directory[directory].mutators, *by_directory[directory].validators)
    ]


def _spec(step: Step, package: Package, prefix: str, allow_network: bool) -> FunctionSpec:
    return FunctionSpec(
        kind="container" if step.image else "exec",
        image=expand_image(step.image, prefix) if step.image else None,
        exec_path=step.exec_argv[0] if step.exec_argv else None,
        args=step.exec_argv[1:],
        network=allow_network,
        config=_config(step, package),
        declared_in=step.kptfile,
        selectors=step.selectors,
        exclude=step.exclude,
        validator=step.validator,
    )


def _config(step: Step, package: Package) -> Resource | None:
    if step.config_map is not None:
        return Resource({
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "function-input", "annotations": {"config.kubernetes.io/local-config": "true"}},
            "data": step.config_map,
        })
    if step.config_path is None:
        return None
    path = posixpath.normpath(posixpath.join(posixpath.dirname(step.kptfile), step.config_path))
    found = [r for r in package.resources if r.path == path]
    if not found:
        raise InputError(f"{step.where}: configPath {step.config_path}: no resource in {path}")
    if len(found) > 1:
        raise InputError(f"{step.where}: configPath {step.config_path}: {path} holds {len(found)} resources; a function config is one")
    return found[0]


def render_package(
    root: Path,
    options: "RunOptions",
    events: "Events",
    prefix: str | None = None,
    runtime_for: "RuntimeFor | None" = None,
    shard: tuple[int, int] | None = None,
) -> "Outcome":
    """Read the kpt package, run every pipeline depth-first, and plan the write (not applied)."""
    from .. import writer
    from ..pipeline import check_policy, run_functions
    from ..runtimes import get_runtime

    package = read_kpt_package(root)
    steps = specs(package, image_prefix(prefix), options.sandbox.network, shard)
    check_policy(steps, options, root)
    outcome = run_functions(steps, package.resources, options, root, events, runtime_for or get_runtime)
    outcome.package = package
    outcome.plan = writer.plan(root, outcome.resources, package)
    return outcome
