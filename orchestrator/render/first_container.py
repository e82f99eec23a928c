"""The image a render starts first, read from the package's root Kptfile alone: for fnrun's
launcher (orchestrator.launch) to start that container while the rest of fnrun is imported.

Exact or nothing. The Kptfile is read by fnrun's own YAML reader (orchestrator.yamlio.fast, the
libyaml reading the render itself does, loaded here a little earlier), never by pattern. Only a
package whose one Kptfile is its root's is read: with a subpackage, the first function is the
deepest package's, which takes the render's whole walk to know. Whatever is not plain leaves the
start to the render: a `when:` (the step may be skipped), a `tag:` constraint (only the engine's
tags resolve it), a Kptfile the render would refuse. An image the pipeline calls again is served
by a warm container: the launcher then starts that one (orchestrator.runtimes.container.warm). Even so the answer is only a proposal: the render adopts the early container
for an identical create request alone (orchestrator.runtimes.container.early), and the launcher
removes it otherwise.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..yamlio import fast
from .images import image_prefix, is_constraint, resolve, split_tag

KPTFILE = "Kptfile"
API_VERSION = "kpt.dev/v1"
MAX_KPTFILE_BYTES = 256 * 1024  # a Kptfile is a few hundred bytes; a bigger one is not read twice
MAX_ENTRIES = 5000  # directory entries looked at for a subpackage before leaving it to the render


def first_step(root: Path, prefix: str | None) -> tuple[str, bool] | None:
    """(the full image of the first container step `render root` runs, whether another step of the
    pipeline names the same repository: a warm container would serve them), or None when that is
    not known exactly and cheaply."""
    steps = _steps(_kptfile(root))
    if not steps:
        return None
    first = next((step for step in steps if step.get("image")), None)  # an exec step runs on this machine
    if first is None or first.get("when") is not None:
        return None
    image, tag = first.get("image"), first.get("tag")
    if not isinstance(image, str) or (tag is not None and (not isinstance(tag, str) or is_constraint(tag))):
        return None
    full_prefix = image_prefix(prefix)
    try:
        resolved = resolve(image, tag, full_prefix, KPTFILE)
    except InputError:
        return None
    repeats = any(_repository(step.get("image"), full_prefix) in (None, _repository(resolved, full_prefix))
                  for step in steps if step is not first and step.get("image"))
    return (resolved, repeats) if _no_subpackage(root) else None


def _kptfile(root: Path) -> dict[str, Any] | None:
    """The root Kptfile's one document, or None: no regular file there, too big, not one
    document, not YAML the render reads, not a kpt.dev/v1 Kptfile."""
    try:
        fd = os.open(root / KPTFILE, os.O_RDONLY | os.O_NONBLOCK)  # a FIFO must not block the launcher
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        with os.fdopen(fd, "rb", closefd=False) as stream:
            raw = stream.read(MAX_KPTFILE_BYTES + 1)
    except OSError:
        return None
    finally:
        os.close(fd)
    if len(raw) > MAX_KPTFILE_BYTES:
        return None
    try:
        documents = fast.load_all(fast.decode(raw, KPTFILE).replace("\r\n", "\n"), KPTFILE)
    except InputError:
        return None
    if len(documents) != 1 or not isinstance(documents[0], dict):
        return None
    data = documents[0]
    return data if data.get("kind") == "Kptfile" and data.get("apiVersion") == API_VERSION else None


def _steps(data: dict[str, Any] | None) -> list[dict[str, Any]] | None:
    """The pipeline's steps in run order (mutators, then validators; an empty entry is none, as
    the render reads it); None when one is not a mapping with exactly one of image and exec."""
    pipeline = (data.get("pipeline") if data is not None else None) or {}
    if not isinstance(pipeline, dict):
        return None
    steps = []
    for section in ("mutators", "validators"):
        entries = pipeline.get(section) or []
        if not isinstance(entries, list):
            return None
        for entry in entries:
            if entry is None:
                continue
            if not isinstance(entry, dict) or bool(entry.get("image")) == bool(entry.get("exec")):
                return None
            steps.append(entry)
    return steps


def _repository(image: Any, prefix: str) -> str | None:
    """The repository an image names, prefixed as the render prefixes it; None if not a string."""
    if not isinstance(image, str):
        return None
    return split_tag((image if "/" in image else prefix + image).partition("@")[0])[0]


def _no_subpackage(root: Path) -> bool:
    """Whether no directory below `root` holds a Kptfile. Hidden and symlinked directories are
    not entered, as the package reader does not enter them; what the reader leaves out by
    .krmignore still counts here, and a package too big to walk cheaply counts as having one."""
    top = os.fspath(root)
    pending = [top]
    seen = 0
    try:
        while pending:
            directory = pending.pop()
            with os.scandir(directory) as entries:
                for entry in entries:
                    seen += 1
                    if seen > MAX_ENTRIES or (entry.name == KPTFILE and directory != top):
                        return False
                    if not entry.name.startswith(".") and entry.is_dir(follow_symlinks=False):
                        pending.append(entry.path)
    except OSError:
        return False
    return True
