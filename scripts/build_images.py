"""Build every image fnrun and its tests need, with no registry, through the Docker SDK.

Run: ``.venv/bin/python scripts/build_images.py [--rebuild] [--only NAME ...]``

Why a script: no registry can be reached here, so every image is built locally, from this
repository, in an order that respects their dependencies, and re-runs must be cheap. The
building itself is orchestrator.imagebuild's, which `fnrun images build` also runs from an
installed fnrun (catalog images only); this script adds the test images and their staging.

What it builds, in order:

1. The base image. ``BASE_IMAGE`` from the environment is used as it is. Otherwise
   ``fnrun/python-base:bookworm`` is reused when present (``--rebuild`` builds it anew), or
   built with ``debootstrap --variant=minbase`` (python3-minimal, python3-ruamel.yaml,
   python3-yaml) from the host's Debian mirror and imported as a tar through the SDK.
2. ``Dockerfiles/<name>.Dockerfile`` -> ``fnrun/<name>:v1``, build context the repository root
   (trimmed by ``/.dockerignore``). ``fnrun-base`` comes first: it is the base image plus fnrun
   itself. Any image whose ``FROM`` names another image built here is built after it.
3. ``tests/images/<name>/`` -> ``fnrun-test/<name>:v1``, context its own directory, built
   from its own ``Dockerfile`` or, when it has only a ``main.py``, from the shared
   ``tests/images/Dockerfile`` with ``tests/images/krm.py`` (the protocol helper) beside
   it. A ``stage-files`` file lists more files (one a line: absolute = from the host, relative =
   from the repository root) to copy into a temporary copy of the context before building: the
   registry image takes Debian's ``/usr/bin/docker-registry`` this way, because a build
   container cannot reach a trusted package mirror.

Every build gets the build arg ``BASE_IMAGE``. An image carries a label with a hash of its inputs
(Dockerfile, the context files it copies, the images it is built FROM); an image whose label
matches is reported "up to date" and not rebuilt (a no-op run takes well under a second; a
change under orchestrator/ or functions/ rebuilds fnrun-base and the catalog, a few seconds).
Untagged images that earlier runs left behind are pruned (only ours, found by that label).

Convention for catalog Dockerfiles (``Dockerfiles/<name>.Dockerfile``): function images have no
pip, so fnrun reaches them through ``fnrun-base``, which holds ``orchestrator/`` and
``functions/`` under ``/opt/fnrun`` (on ``PYTHONPATH``, byte-compiled), the launcher
``/usr/local/bin/fnrun`` (``Dockerfiles/fnrun-launcher``) and ``USER 65534``::

    FROM fnrun/fnrun-base:v1
    ENTRYPOINT ["fnrun", "wrap", "--", "sh", "-c", "..."]      # a shell template, or
    ENTRYPOINT ["python3", "-m", "functions.<module>"]           # a Python function

A catalog image that needs other files copies them with paths relative to the repository root.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import time
from pathlib import Path

import docker.errors

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))  # this checkout's orchestrator, whatever the venv has installed
from orchestrator.imagebuild.base import BASE_TAG  # noqa: E402
from orchestrator.imagebuild.engine import HASH_LABEL, BuildFailure, Target, catalog_targets, image_id, report  # noqa: E402
from orchestrator.imagebuild.flow import Build, build, choose, connect  # noqa: E402

__all__ = ["BASE_TAG", "HASH_LABEL", "Target", "discover", "image_id", "main"]
STAGE_FILES = "stage-files"
LOG_DIR = REPO / "build" / "image-logs"


def discover(repo: Path = REPO) -> list[Target]:
    """Every image this repository builds, catalog first, then test images."""
    targets = catalog_targets(repo)
    shared = repo / "tests" / "images"
    for context in sorted(p for p in shared.glob("*/") if p.is_dir()):
        listing = context / STAGE_FILES
        lines = listing.read_text().splitlines() if listing.is_file() else []
        staged = tuple(repo / line.strip() for line in lines
                       if line.strip() and not line.startswith("#"))
        if (context / "Dockerfile").is_file():
            dockerfile = context / "Dockerfile"
        elif (context / "main.py").is_file():
            dockerfile, staged = shared / "Dockerfile", (shared / "Dockerfile", shared / "krm.py",
                                                         *staged)
        else:
            continue
        targets.append(Target(context.name, f"fnrun-test/{context.name}:v1", dockerfile, context,
                              staged))
    return targets


def stage(target: Target, into: Path) -> Path:
    """The context to build from: the target's own, or a temporary copy with its stage files."""
    if not target.stage_files:
        return target.context
    staged = into / target.name
    shutil.copytree(target.context, staged)
    for source in target.stage_files:
        if not source.is_file():
            raise BuildFailure(f"{source} is missing (listed in "
                               f"{target.context.relative_to(REPO)}/{STAGE_FILES}); "
                               "run .ci/setup or install its package")
        shutil.copy2(source, staged / source.name)
    return staged


def main(argv: list[str] | None = None) -> int:
    """Build the base image, then every catalog and test image; exit 1 if any failed."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rebuild", action="store_true",
                        help="build everything anew, the debootstrap base included")
    parser.add_argument("--only", nargs="+", metavar="NAME", default=[],
                        help="build only these images (and the images they build FROM)")
    args = parser.parse_args(argv)
    started = time.monotonic()
    try:
        client = connect()
    except docker.errors.DockerException as exc:
        print(f"build_images: no Docker engine answers ({exc}); run .ci/setup", file=sys.stderr)
        return 1
    wanted = Build(discover(), REPO / "functions", LOG_DIR, sys.stdout, tuple(args.only),
                   os.environ.get("BASE_IMAGE") or None, args.rebuild, stage)
    try:
        chosen = choose(wanted)
    except BuildFailure as exc:
        print(f"build_images: {exc}", file=sys.stderr)
        return 2
    try:
        failures = build(client, wanted, chosen)
    except BuildFailure as exc:
        report(BASE_TAG, f"FAILED: {exc}")
        return 1
    summary = f"{len(chosen) - failures} of {len(chosen)} images ready"
    print(f"build_images: {summary} in {time.monotonic() - started:.1f}s"
          + (f", {failures} FAILED" if failures else ""), flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
