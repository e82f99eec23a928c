"""What the lock and bundle tests share: function images of their own (never the shared fnrun/*
tags, which other work may rebuild), each saying in its output which build it is, and a package
that shows it."""

from __future__ import annotations

import uuid
from pathlib import Path

import docker.errors
import yaml

from testing.pipeline_helpers import function_config, write_package
from testing.runtime_fixtures import api, build_image

# Rewrites `build: none` in the package to the build's name: the output says which content ran.
BUILD_DOCKERFILE = """ARG BASE_IMAGE
FROM ${{BASE_IMAGE}}
RUN echo {build} > /build
USER 65534
ENTRYPOINT ["sh", "-c", "sed \\"s/build: none/build: $(cat /build)/\\""]
"""

CONFIGMAP = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  build: none\n"


def unique(name: str) -> str:
    """A repository name no other test run uses."""
    return f"fnrun-test/lock-{name}-{uuid.uuid4().hex[:8]}"


def build(tag: str, build_name: str) -> str:
    """Build `tag` as build `build_name`; its image ID."""
    build_image(tag, BUILD_DOCKERFILE.format(build=build_name))
    return api().inspect_image(tag)["Id"]


def remove(*references: str) -> None:
    for reference in references:
        try:
            api().remove_image(reference, force=True)
        except docker.errors.NotFound:
            pass


def package(root: Path, image: str) -> Path:
    """cm.yaml (`build: none`) and fn.yaml declaring `image` over it."""
    return write_package(root, {"cm.yaml": CONFIGMAP, "fn.yaml": function_config(image)})


def build_ran(root: Path) -> str:
    """Which build last rewrote cm.yaml ('none': nothing ran)."""
    return yaml.safe_load((root / "cm.yaml").read_text())["data"]["build"]


def lock_entries(path: Path) -> dict[str, dict]:
    return {entry["image"]: entry for entry in yaml.safe_load(path.read_text())["images"]}
