"""Air-gapped bundles: every image a lock pins, in one docker-archive file, and back.

A bundle is what `docker save` writes (manifest.json naming each image's config and layers; the
OCI layout's index.json beside it on newer engines). Before anything is loaded, fnrun reads the
archive itself: each locked image must be there under its tag, its config must hash to the
locked image ID, and each layer must hash to the diff ID its config names. A bundle that fails
any of it (corrupt, truncated, other content) is refused whole: the engine is never handed it.
"""

from __future__ import annotations

import hashlib
import json
import os
import tarfile
import tempfile
import zlib
from pathlib import Path

from ..errors import FnrunError, InputError
from ..runtimes.container import imagestore
from .lockfile import Entry, Lock, publish

CHUNK = 1 << 20


def carried(lock: Lock) -> list[Entry]:
    """The entries a bundle carries: every image (not those fnrun serves by its own code)."""
    return [entry for _, entry in sorted(lock.entries.items()) if entry.served_by is None]


def save(lock: Lock, bundle: Path) -> list[str]:
    """Write every locked image into `bundle` (nothing there when anything fails); the images."""
    entries = carried(lock)
    for entry in entries:  # what is saved by its tag must still be what the lock pins
        found = imagestore.identity(entry.image)
        if found is None or found.id != entry.id:
            now = "not present" if found is None else f"{found.id} now"
            raise FnrunError(f"{lock.path}: image {entry.image} is {now}, not the locked {entry.id}; "
                             f"run `fnrun lock` (or `fnrun images load` an older bundle) first", exit_code=imagestore.ENVIRONMENT)
    target = bundle.absolute()
    try:
        fd, temp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    except OSError as err:
        raise InputError(f"{bundle}: cannot write the bundle there: {err.strerror}") from None
    try:
        with os.fdopen(fd, "wb") as out:
            imagestore.export([e.image for e in entries], out)
        verify(Path(temp), lock, shown=str(bundle))
        publish(Path(temp), target)
    except OSError as err:
        Path(temp).unlink(missing_ok=True)
        raise InputError(f"{bundle}: cannot write the bundle: {err.strerror}") from None
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
    return [e.image for e in entries]


def load(bundle: Path, lock: Lock) -> list[str]:
    """Verify `bundle` against the lock, then load it into the engine; the images loaded."""
    images = verify(bundle, lock)
    with bundle.open("rb") as source:
        imagestore.load(iter(lambda: source.read(CHUNK), b""))
    for entry in carried(lock):
        found = imagestore.identity(entry.image)
        if found is None or found.id != entry.id:
            raise FnrunError(f"{bundle}: the engine loaded it, yet {entry.image} is not {entry.id} there", exit_code=imagestore.ENVIRONMENT)
    return images


def verify(bundle: Path, lock: Lock, shown: str | None = None) -> list[str]:
    """Check the archive holds exactly the locked content for every image; one line on the first fault."""
    name = shown or str(bundle)
    try:
        with tarfile.open(bundle, "r:*") as archive:
            tagged = _contents(archive, name)
            wanted = carried(lock)
            for entry in wanted:
                config = tagged.get(_tag(entry.image))
                if config is None:
                    raise InputError(f"{name}: {entry.image} (locked in {lock.path}) is not in the bundle; nothing loaded")
                if config != entry.id:
                    raise InputError(f"{name}: {entry.image} is {config} in the bundle, not {entry.id} as {lock.path} locks it; nothing loaded")
            extra = sorted(set(tagged) - {_tag(e.image) for e in wanted})
            if extra:
                raise InputError(f"{name}: {extra[0]} is in the bundle but not in {lock.path}; nothing loaded")
    except (tarfile.TarError, EOFError, OSError, ValueError, KeyError, zlib.error) as err:
        what = getattr(err, "strerror", None) or (str(err).splitlines() or [""])[0].rstrip(":") or type(err).__name__
        if what.startswith("file could not be opened"):
            what = "not a tar archive"
        raise InputError(f"{name}: not a readable image bundle ({what}); nothing loaded") from None
    return [e.image for e in wanted]


def _contents(archive: tarfile.TarFile, name: str) -> dict[str, str]:
    """tag -> image ID, every config and layer hashed here (not taken from file names)."""
    manifest = json.loads(_read(archive, "manifest.json"))
    if not isinstance(manifest, list):
        raise InputError(f"{name}: manifest.json is not a list of images; nothing loaded")
    tagged: dict[str, str] = {}
    for image in manifest:
        if not isinstance(image, dict) or not isinstance(image.get("Config"), str) or not isinstance(image.get("Layers"), list):
            raise InputError(f"{name}: manifest.json has an entry without Config and Layers; nothing loaded")
        if not all(isinstance(layer, str) for layer in image["Layers"]):
            raise InputError(f"{name}: manifest.json names a layer that is not a file name; nothing loaded")
        raw = _read(archive, image["Config"])
        image_id = "sha256:" + hashlib.sha256(raw).hexdigest()
        config = json.loads(raw)
        rootfs = config.get("rootfs") if isinstance(config, dict) else None
        diff_ids = rootfs.get("diff_ids") if isinstance(rootfs, dict) else None
        if not isinstance(diff_ids, list):
            raise InputError(f"{name}: the config of image {image_id} has no rootfs.diff_ids; nothing loaded")
        if len(diff_ids) != len(image["Layers"]):
            raise InputError(f"{name}: image {image_id} names {len(image['Layers'])} layers, its config {len(diff_ids)}; nothing loaded")
        for layer, diff_id in zip(image["Layers"], diff_ids):
            if _hash(archive, layer) != diff_id:
                raise InputError(f"{name}: layer {layer} of image {image_id} does not hash to {diff_id}; nothing loaded")
        for tag in image.get("RepoTags") or []:
            tagged[_tag(tag)] = image_id
    return tagged


def _read(archive: tarfile.TarFile, member: str) -> bytes:
    found = archive.extractfile(member)
    if found is None:
        raise KeyError(f"{member} is not a file")
    with found:
        return found.read()


def _hash(archive: tarfile.TarFile, member: str) -> str:
    """The diff ID of a layer: the sha256 of its uncompressed tar (an engine may save it gzipped)."""
    import gzip

    found = archive.extractfile(member)
    if found is None:
        raise KeyError(f"{member} is not a file")
    digest = hashlib.sha256()
    with found:
        gzipped = found.read(2) == b"\x1f\x8b"
        found.seek(0)
        stream = gzip.GzipFile(fileobj=found) if gzipped else found
        while chunk := stream.read(CHUNK):
            digest.update(chunk)
    return "sha256:" + digest.hexdigest()


def _tag(reference: str) -> str:
    """A tag as the engine writes it in RepoTags: repository normalised, `:latest` when none."""
    from ..render.images import split_tag

    repository, tag = split_tag(reference)
    return f"{imagestore.normal_repository(repository)}:{tag or 'latest'}"
