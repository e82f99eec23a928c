"""One build, from engine to pruned leftovers: `fnrun images build` and the repository's
scripts/build_images.py differ only in what they build and where lines and logs go."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

import docker
from docker.utils import kwargs_from_env

from ..runtimes.container import engine_choice
from .base import BASE_TAG, ensure_base
from .engine import Builder, Stager, Target, order, report, select

BUILD_TIMEOUT = 900  # seconds: a debootstrap import or a cold build of fnrun-base is slow


def connect() -> docker.DockerClient:
    """The engine functions run on (DOCKER_HOST, else the one KRM_FN_RUNTIME names): an image
    built anywhere else would not be found when a run needs it. DockerException when none answers."""
    choice = engine_choice.chosen()
    kwargs = kwargs_from_env(environment={**os.environ, **({"DOCKER_HOST": choice.host} if choice.host else {})})
    ssh = str(kwargs.get("base_url", "")).startswith("ssh://")
    client = docker.DockerClient(timeout=BUILD_TIMEOUT, use_ssh_client=ssh, **kwargs)
    client.ping()
    engine_choice.announce(choice)
    return client


@dataclass(frozen=True)
class Build:
    """What to build and where its output goes."""

    targets: list[Target]
    functions_dir: Path  # function sources, hashed into each catalog image's label
    log_dir: Path
    stream: TextIO
    only: tuple[str, ...] = ()
    base_image: str | None = None  # None: fnrun's debootstrap base, reused when present
    rebuild: bool = False
    stage: Stager | None = None
    scope: str | None = None


def choose(wanted: Build) -> list[Target]:
    """The targets to build, in order (with what the `only` ones build FROM); BuildFailure for a
    name that is not one of them."""
    planned = wanted.base_image or BASE_TAG
    return select(wanted.targets, list(wanted.only), planned) if wanted.only else order(wanted.targets, planned)


def build(client: docker.DockerClient, wanted: Build, chosen: list[Target]) -> int:
    """The base image, then `chosen` in order; the number that failed. BuildFailure when the base
    cannot be had (nothing else is built then)."""
    base = ensure_base(client, wanted.base_image, wanted.rebuild, lambda tag, what, seconds: report(tag, what, seconds, wanted.stream), wanted.log_dir)
    builder = Builder(client, base, wanted.functions_dir, wanted.log_dir, wanted.stream, wanted.stage, wanted.scope)
    failures = builder.build_all(chosen, wanted.rebuild)
    builder.prune()
    return failures
