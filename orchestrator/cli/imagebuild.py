"""`fnrun images build`: fnrun's own function images from the installed package alone, on the
engine runs use (DOCKER_HOST, else KRM_FN_RUNTIME), with no registry (orchestrator.imagebuild). Registers itself on the
`images` group when imported."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from .images import images_app

EXAMPLES = ("Examples:\n\n"
            "  fnrun images build\n\n"
            "  fnrun images build --only set-labels")


@images_app.command("build", epilog=EXAMPLES)
def build(
    base_image: str | None = typer.Option(None, "--base-image", envvar="BASE_IMAGE", metavar="IMAGE",
                                             help="The Python image to build on (default: fnrun/python-base:bookworm, made with debootstrap when absent; needs root)."),
    only: list[str] | None = typer.Option(None, "--only", metavar="NAME", help="Build only this image (and what it builds FROM); repeatable."),
    repository: str = typer.Option("fnrun", "--repository", metavar="NAME", help="Tag the images NAME/<function>:v1 (default fnrun, the names packages use)."),
    rebuild: bool = typer.Option(False, "--rebuild", help="Build anew even when an image's inputs are unchanged."),
) -> int:
    """Build fnrun's catalog function images (fnrun/set-labels:v1, fnrun/nginx-template:v1, ...)
    from the Dockerfiles and sources installed with fnrun. An image whose inputs are unchanged is
    kept; one line per image goes to stderr."""
    import tempfile

    import docker.errors

    from ..errors import EnvironmentProblem, InputError
    from ..imagebuild import engine, flow, sources

    try:
        client = flow.connect()
    except docker.errors.DockerException as exc:
        raise EnvironmentProblem(f"no container engine answers ({exc}); start one or set DOCKER_HOST") from None
    with tempfile.TemporaryDirectory(prefix="fnrun-images-") as tmp:
        root = sources.assemble(Path(tmp) / "context", repository)
        log_dir = Path(tempfile.gettempdir()) / "fnrun-image-logs"
        wanted = flow.Build(engine.catalog_targets(root, repository), root / "functions", log_dir, sys.stderr,
                            tuple(only or ()), base_image, rebuild, scope=repository)
        try:
            chosen = flow.choose(wanted)
        except engine.BuildFailure as exc:
            raise InputError(f"--only: {exc}") from None
        try:
            failures = flow.build(client, wanted, chosen)
        except engine.BuildFailure as exc:
            raise EnvironmentProblem(f"base image: {exc}") from None
    if failures:
        raise EnvironmentProblem(f"{failures} of {len(chosen)} images failed to build (see above)")
    print(f"fnrun images: {len(chosen)} image{'s' if len(chosen) != 1 else ''} ready", file=sys.stderr)
    return 0
