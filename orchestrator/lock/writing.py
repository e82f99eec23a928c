"""`fnrun lock`: every image the inventory finds, resolved to the content the engine holds for
it (or, with `pull`, what its registry serves now), written as the repository's lock.

What identity an image gets:
- an image the engine has: its image ID, and its manifest digest in that repository when the
  engine knows one (pulled or pushed images do; an image built here has none, and is locked by
  its ID alone: a bundle carries it, a registry cannot);
- with `pull`: the registry's image is pulled first, so the manifest digest is the registry's;
- an image the engine does not have but fnrun runs by its own code: `servedBy: fnrun`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..errors import FnrunError
from ..runtimes import catalog_module
from ..runtimes.container import imagestore
from . import builtins, lockfile
from .inventory import inventory
from .lockfile import Entry


@dataclass(frozen=True)
class LockRequest:
    directories: tuple[Path, ...]
    image_prefix: str | None = None
    extra_images: tuple[str, ...] = ()
    pull: bool = False
    builtin_catalog: bool = False  # absent kpt catalog images may be locked as served by fnrun
    workers: int | None = None  # FNRUN_WORKERS as the edge read it: the packages' reading


def lock_path(request: LockRequest) -> Path:
    return lockfile.home(list(request.directories)) / lockfile.LOCK_NAME


def entries(request: LockRequest) -> list[Entry]:
    """The lock's entries, declaring files relative to the lock's directory."""
    base = lock_path(request).parent
    images = inventory(list(request.directories), request.image_prefix, request.extra_images, relative_to=base, workers=request.workers)
    return [_entry(image, tuple(files), request) for image, files in images.items()]


def _entry(image: str, declared: tuple[str, ...], request: LockRequest) -> Entry:
    if request.pull:
        imagestore.pull(image)
    found = imagestore.identity(image)
    if found is not None:
        repository = image.partition("@")[0] if "@" in image else _repository(image)
        digest = image.partition("@")[2] if "@" in image else found.digest_for(repository)
        return Entry(image, declared, id=found.id, digest=digest)
    module = catalog_module(image, request.builtin_catalog)
    if module is not None:
        return Entry(image, declared, served_by=lockfile.SERVED_BY_FNRUN, source=builtins.code_digest(module))
    raise FnrunError(f"{declared[0]}: image {image} is not present in the engine; pull or build it "
                     f"(or `fnrun lock --pull`), then lock again", exit_code=imagestore.ENVIRONMENT)


def _repository(image: str) -> str:
    from ..render.images import split_tag

    return split_tag(image)[0]


def write(request: LockRequest) -> tuple[Path, bool]:
    """Write the lock; (its path, whether its bytes changed)."""
    path = lock_path(request)
    data = lockfile.encode(entries(request))
    old = path.read_bytes() if path.is_file() else None
    if old != data:
        _atomic(path, data)
    return path, old != data


def check(request: LockRequest) -> tuple[Path, list[str]]:
    """What is stale in the lock (empty: it is current). A bad lock file raises its own error."""
    path = lock_path(request)
    if not path.is_file():
        return path, [f"{path} does not exist; run `fnrun lock`"]
    current = lockfile.decode(path).entries
    wanted = {e.image: e for e in entries(request)}
    stale = [f"{image}: not in {path.name}" for image in wanted if image not in current]
    stale += [f"{image}: in {path.name} but no longer used" for image in current if image not in wanted]
    for image, entry in wanted.items():
        old = current.get(image)
        if old is not None and old != entry:
            what = "declared elsewhere" if (old.id, old.digest, old.source) == (entry.id, entry.digest, entry.source) else \
                f"locked {old.pinned_as()}, the engine has {entry.pinned_as()}"
            stale.append(f"{image}: {what}")
    if not stale and path.read_bytes() != lockfile.encode(list(wanted.values())):
        stale.append(f"{path.name} is not as `fnrun lock` writes it")
    return path, sorted(stale)


def _atomic(path: Path, data: bytes) -> None:
    import os
    import tempfile

    fd, temp = tempfile.mkstemp(prefix=".fnrun.lock.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        lockfile.publish(Path(temp), path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
