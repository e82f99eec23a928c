"""Every function image a `run` or `render` of some directories would start, with the files that
declare it: annotation-declared functions, every Kptfile pipeline at any depth (images resolved as
render resolves them) and images given on the command line. `fnrun lock`, `fnrun doctor DIR` and
`fnrun images save` all ask this one inventory, so what is locked, checked and carried is what runs."""

from __future__ import annotations

import os
from pathlib import Path

from .. import collector
from ..kinds import Kind
from ..read.package import read_package
from ..select.functions import discover

COMMAND_LINE = "--image"  # the declaring "file" of an image given with --image


@collector.paused()
def inventory(directories: list[Path], image_prefix: str | None = None, extra: tuple[str, ...] = (),
              relative_to: Path | None = None, workers: int | None = None) -> dict[str, list[str]]:
    """image reference -> the sorted files declaring it (relative to `relative_to`, else to the
    current directory), over every directory; each reference once (`workers`: FNRUN_WORKERS as
    the edge read it)."""
    from ..render.kptfile import is_kptfile
    from ..render.runner import KPTFILE_NAMES, pipeline_steps

    found: dict[str, set[str]] = {}
    for directory in directories:
        resources = read_package(directory, KPTFILE_NAMES, workers=workers).resources
        specs = [spec for spec in discover(resources) if spec.kind == Kind.CONTAINER]
        if any(is_kptfile(r) for r in resources):
            specs += [spec for _, spec in pipeline_steps(resources, image_prefix) if spec.kind == Kind.CONTAINER]
        for spec in specs:
            assert spec.image is not None and spec.declared_in is not None
            found.setdefault(spec.image, set()).add(shown(directory / spec.declared_in, relative_to))
    for image in extra:
        found.setdefault(image, set()).add(COMMAND_LINE)
    return {image: sorted(files) for image, files in sorted(found.items())}


def shown(path: Path, base: Path | None = None) -> str:
    """A declaring file as the lock and messages name it: relative to `base` (else the current
    directory) when inside it, else absolute; posix slashes."""
    relative = Path(os.path.relpath(path.absolute(), (base or Path.cwd()).absolute())).as_posix()
    return relative if relative.split("/")[0] != ".." else path.absolute().as_posix()
