"""The commands about function images as content: `fnrun lock` and `fnrun images save/load`.
A thin typer shell over orchestrator.lock, registered on the main app by `register`."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

images_app = typer.Typer(help="Build fnrun's own function images; carry the locked images to an air-gapped machine (see `fnrun lock --help`).", no_args_is_help=True)


def lock(
    directories: list[Path] | None = typer.Argument(None, help="Package directories (default: .)."),
    image: list[str] | None = typer.Option(None, "--image", "-i", help="Lock this image too (one you run with `fnrun run --image`); repeatable."),
    image_prefix: str | None = typer.Option(None, "--image-prefix", envvar="KPT_IMAGE_PREFIX", help="Registry prefix for short Kptfile image names, as `fnrun render --image-prefix`."),
    pull: bool = typer.Option(False, "--pull", help="Pull every image first: lock what its registry serves now (its manifest digest)."),
    builtin_catalog: bool = typer.Option(False, "--builtin-catalog", help="Lock kpt catalog images the engine does not have as served by fnrun's own code."),
    check: bool = typer.Option(False, "--check", help="Write nothing; exit 3 and say what differs when the lock is not current."),
) -> int:
    """Pin every function image a `run` or `render` of the directories would start to its content,
    in fnrun.lock at the repository root (the git top level, else the first directory).

    Each image gets its image ID and, when a registry knows it, its manifest digest (an image built
    here has no digest: it is locked by its ID, which `fnrun images save` carries). From then on
    `run` and `render` under that root run each image by its locked content and refuse an image
    that is not locked or whose tag now names other content; --no-lock opts out."""
    from ..lock.writing import LockRequest, check as stale, write
    from ..settings import chosen_workers

    request = LockRequest(tuple(directories or [Path(".")]), image_prefix, tuple(image or ()), pull, builtin_catalog, chosen_workers())
    if check:
        path, differences = stale(request)
        for line in differences:
            print(f"fnrun lock: {line}", file=sys.stderr)
        if differences:
            print(f"fnrun: error: {path} is stale ({len(differences)} difference{'s' if len(differences) != 1 else ''}); run `fnrun lock`", file=sys.stderr)
            return 3
        print(f"fnrun lock: {path} is current", file=sys.stderr)
        return 0
    path, changed = write(request)
    print(f"fnrun lock: {path} {'written' if changed else 'unchanged'}", file=sys.stderr)
    return 0


@images_app.command("save", epilog="Example:  fnrun images save functions.tar samples/")
def save(
    bundle: Path = typer.Argument(..., help="The archive to write (a docker-archive, what `docker save` writes)."),
    directories: list[Path] | None = typer.Argument(None, help="Directories whose fnrun.lock to follow (default: .)."),
) -> None:
    """Write every image fnrun.lock pins into one archive, checked against the lock as it is written."""
    from ..lock.bundle import save as save_bundle

    images = save_bundle(_lock(directories), bundle)
    print(f"fnrun images: saved {len(images)} image{'s' if len(images) != 1 else ''} to {bundle}", file=sys.stderr)


@images_app.command("load", epilog="Example:  fnrun images load functions.tar")
def load(
    bundle: Path = typer.Argument(..., help="An archive `fnrun images save` wrote."),
    directories: list[Path] | None = typer.Argument(None, help="Directories whose fnrun.lock to check the bundle against (default: .)."),
) -> None:
    """Load an archive into the engine, after checking that every image in it is the content
    fnrun.lock pins (config and layer digests); a bundle that differs is refused, nothing loaded."""
    from ..lock.bundle import load as load_bundle

    images = load_bundle(bundle, _lock(directories))
    print(f"fnrun images: loaded {len(images)} image{'s' if len(images) != 1 else ''} from {bundle}", file=sys.stderr)


def _lock(directories: list[Path] | None):
    from ..errors import InputError
    from ..lock.lockfile import LOCK_NAME, decode, find, home

    start = (directories or [Path(".")])[0]
    path = find(start)
    if path is None:
        raise InputError(f"no {LOCK_NAME} governs {start} (looked up to {home([start])}); run `fnrun lock` first")
    return decode(path)


def register(app: typer.Typer) -> None:
    app.command(epilog="Examples:\n\n  fnrun lock samples/ --image-prefix fnrun\n\n  fnrun lock --check")(lock)
    app.add_typer(images_app, name="images")
