"""`fnrun.lock`: which content each function image reference stands for, where it is declared.

One entry per image reference, sorted, keys in a fixed order, so the same images always give the
same bytes and a change reads as a small diff. An entry pins an image by its image ID (`id`, the
sha256 of its config: what the engine runs and a docker-archive carries, also for an image built
here that no registry knows) and, when a registry knows it, its manifest digest (`digest`, which
pulls the same content anywhere). An image fnrun runs by its own in-process code has
`servedBy: fnrun` and the digest of that code (`source`) instead.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..errors import InputError

LOCK_NAME = "fnrun.lock"
API_VERSION = "fnrun.dev/v1alpha1"
KIND = "ImageLock"
HEADER = "# Function images by content, written by `fnrun lock` (check: `fnrun lock --check`).\n"
_TOP = ("apiVersion", "kind", "images")
_FIELDS = ("image", "digest", "id", "servedBy", "source", "declaredIn")
SERVED_BY_FNRUN = "fnrun"


@dataclass(frozen=True)
class Entry:
    image: str
    declared_in: tuple[str, ...]
    id: str | None = None  # sha256:... image ID
    digest: str | None = None  # sha256:... registry manifest digest
    served_by: str | None = None  # "fnrun": run by fnrun's in-process code, never an image
    source: str | None = None  # with served_by: the digest of that code

    def pinned_as(self) -> str:
        """How messages name the locked content."""
        return self.digest or self.id or self.source or "?"


@dataclass(frozen=True)
class Lock:
    path: Path
    entries: dict[str, Entry]


def encode(entries: list[Entry]) -> bytes:
    """The lock's bytes: the same entries always give the same bytes."""
    lines = [HEADER.rstrip("\n"), f"apiVersion: {API_VERSION}", f"kind: {KIND}", "images:" + ("" if entries else " []")]
    for entry in sorted(entries, key=lambda e: e.image):
        values = {"image": entry.image, "digest": entry.digest, "id": entry.id, "servedBy": entry.served_by, "source": entry.source}
        first = True
        for key in _FIELDS[:-1]:
            value = values[key]
            if value is not None:
                lines.append(f"{'- ' if first else '  '}{key}: {_scalar(value)}")
                first = False
        lines.append("  declaredIn:")
        lines += [f"  - {_scalar(path)}" for path in entry.declared_in]
    return ("\n".join(lines) + "\n").encode()


def _scalar(text: str) -> str:
    """A string as YAML: plain where that reads back as the same string, else double-quoted (JSON)."""
    import json

    safe = text and all(c.isalnum() or c in "._/-:@+" for c in text) and text[0] not in "-:@.0123456789" and ": " not in text
    return text if safe and text not in ("true", "false", "null", "yes", "no", "on", "off", "~") else json.dumps(text)


def decode(path: Path) -> Lock:
    """Read a lock strictly: an unknown or missing field is an error naming the file and entry."""
    from ..yamlio import fast

    try:
        raw = path.read_bytes()
    except OSError as err:
        raise InputError(f"{path}: cannot read the lock: {err.strerror}") from None
    data = fast.load(fast.decode(raw, str(path)), str(path))
    if not isinstance(data, dict):
        raise InputError(f"{path}: not a lock file (expected a mapping with {', '.join(_TOP)})")
    _known(data, _TOP, str(path))
    if data.get("apiVersion") != API_VERSION or data.get("kind") != KIND:
        raise InputError(f"{path}: expected apiVersion {API_VERSION} and kind {KIND}")
    items = data.get("images")
    if not isinstance(items, list):
        raise InputError(f"{path}: images must be a list")
    entries: dict[str, Entry] = {}
    for index, item in enumerate(items):
        entry = _entry(item, f"{path}: images[{index}]")
        if entry.image in entries:
            raise InputError(f"{path}: images[{index}]: {entry.image} is listed twice")
        entries[entry.image] = entry
    return Lock(path, entries)


def _entry(item: object, where: str) -> Entry:
    if not isinstance(item, dict):
        raise InputError(f"{where} must be a mapping")
    _known(item, _FIELDS, where)
    strings = {key: item.get(key) for key in _FIELDS[:-1]}
    for key, value in strings.items():
        if value is not None and not isinstance(value, str):
            raise InputError(f"{where}: {key} must be a string")
    declared = item.get("declaredIn") or []
    if not isinstance(declared, list) or not all(isinstance(p, str) for p in declared):
        raise InputError(f"{where}: declaredIn must be a list of file names")
    if not strings["image"]:
        raise InputError(f"{where}: image is required")
    for key in ("digest", "id", "source"):
        value = strings[key]
        if value is not None and not _is_digest(value):
            raise InputError(f"{where}: {key} {strings[key]!r} is not a sha256:<64 hex digits> digest")
    if strings["servedBy"] not in (None, SERVED_BY_FNRUN):
        raise InputError(f"{where}: servedBy must be {SERVED_BY_FNRUN!r}")
    if strings["servedBy"] is None and strings["id"] is None:
        raise InputError(f"{where}: {strings['image']} has no id")
    if strings["servedBy"] is not None and strings["source"] is None:
        raise InputError(f"{where}: {strings['image']} is servedBy fnrun without a source digest")
    return Entry(strings["image"], tuple(declared), strings["id"], strings["digest"], strings["servedBy"], strings["source"])


def _is_digest(text: str) -> bool:
    hexes = text[len("sha256:"):]
    return text.startswith("sha256:") and len(hexes) == 64 and all(c in "0123456789abcdef" for c in hexes)


def _known(data: dict, allowed: tuple[str, ...], where: str) -> None:
    unknown = sorted(str(k) for k in data if k not in allowed)
    if unknown:
        raise InputError(f"{where}: unknown field {unknown[0]!r} (known: {', '.join(allowed)})")


def home(directories: list[Path]) -> Path:
    """Where a lock for these directories lives: the git top level of the first, else the first."""
    first = directories[0].absolute() if directories else Path.cwd()
    for directory in (first, *first.parents):
        if (directory / ".git").exists():
            return directory
    return first


def find(directory: Path) -> Path | None:
    """The lock that governs a run in `directory`: the nearest fnrun.lock in it or above, no
    higher than the git top level (a few stat calls: runs without a lock pay nothing more)."""
    start = directory.absolute()
    for candidate in (start, *start.parents):
        if (candidate / LOCK_NAME).is_file():
            return candidate / LOCK_NAME
        if (candidate / ".git").exists():
            return None
    return None


def publish(temp: Path, target: Path) -> None:
    """Move a finished temporary file into place with the mode a new file gets here (a temporary
    file is private; a lock is committed and a bundle is carried)."""
    import os

    umask = os.umask(0o022)
    os.umask(umask)
    os.chmod(temp, 0o666 & ~umask)
    os.replace(temp, target)
