"""Where a resource may land in a package: the one rule every write-back obeys.

A function is untrusted, and the path it gives a resource (`config.kubernetes.io/path`) is only a
wish. The write-back replaces a file's bytes and keeps its mode, so a path naming a file fnrun
never read (`.git/hooks/pre-commit`, `hack/update.sh`, a file `.krmignore` leaves out) would put a
function's YAML into an executable the host later runs. So a resource may land only in

- a file fnrun read as part of the package (its bytes are what the write-back edits), or
- a new file named `*.yaml`, `*.yml` or `Kptfile`, with no hidden part in its path (`.git/`,
  `.github/`, `.pre-commit-config.yaml`: tools run what those hold) and not excluded by
  `.krmignore`; fnrun's own files (`.fnrun-journal`, staged temp files) are hidden and not YAML.

A sink (`fnrun sink` into an existing directory) may also update an existing file that the
package walk would read as resources but did not (a Kptfile, which `fnrun source` lists and the
sink's reader leaves out). Everything else is refused with one line naming the path and why,
before anything is written. docs/security-model.md says what this protects and where kpt differs.
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Collection
from pathlib import Path, PurePosixPath

from ..errors import InputError
from ..read.krmignore import PACKAGE_FILE as KPTFILE, KrmIgnore
from ..read.package import YAML_SUFFIXES


class PathChecker:
    """Judges resource paths against one package root: `read` are the files fnrun read (they may
    be updated or deleted), `update_readable` lets a sink update an existing file the walk would
    read. Each directory is resolved once, however many files it holds."""

    def __init__(self, root: Path, read: Collection[str] = (), update_readable: bool = False) -> None:
        self.root = root
        self.real_root = os.path.realpath(root)
        self._real_dirs: dict[str, str] = {"": self.real_root}
        self._ignore = KrmIgnore(root)
        self._read = read
        self._update_readable = update_readable
        self._new: set[str] = set()
        self._judged: set[str] = set()

    def __call__(self, path: str) -> Path:
        """The file a resource path names, if a resource may land there (see the module);
        InputError naming the path and the reason otherwise."""
        target = self.contained(path)
        norm = normal(path)
        if norm not in self._read and norm not in self._judged:
            self._judge(path, norm, target)
            self._judged.add(norm)
        return target

    def is_new(self, path: str) -> bool:
        """Whether a checked path was judged a new file: its old bytes are none, so a file that
        appears there before the write is a stale input, never something to update."""
        return normal(path) in self._new

    def contained(self, path: str) -> Path:
        """The file a path names inside the package, refusing absolute paths, `..`, directories
        and symlinks out of the package; nothing about whether a resource may land there."""
        pure = PurePosixPath(path)
        if not path or pure.is_absolute():
            raise InputError(f"resource path {path!r} must be relative to the package")
        if ".." in pure.parts:
            raise InputError(f"resource path {path!r} leaves the package (contains '..')")
        if "\0" in path:
            raise InputError(f"resource path {path!r} holds a NUL character, which no file name can")
        target = self.root / pure
        parent = pure.parent.as_posix()
        real = self._real_dir("" if parent == "." else parent)
        if os.path.islink(target):
            real = os.path.realpath(target)
        elif os.path.isdir(target):
            raise InputError(f"resource path {path!r} is a directory")
        if real != self.real_root and not real.startswith(self.real_root.rstrip(os.sep) + os.sep):
            raise InputError(f"resource path {path!r} leaves the package through a symlink")
        return target

    def _judge(self, path: str, norm: str, target: Path) -> None:
        """A path fnrun did not read (`norm`: without `.` parts and doubled slashes): a new YAML
        file in the package's own (not hidden, not excluded) directories, or for a sink an
        existing one the walk would read."""
        reason = _named_wrongly(norm)
        if reason is None:
            excluded_by = self._ignore.excluded(norm)
            if excluded_by is not None:
                reason = f"is excluded by {excluded_by}; fnrun does not write excluded files"
        if reason is None:
            if not os.path.lexists(target):
                reason = self._under_a_file(PurePosixPath(norm))
                if reason is None:
                    self._new.add(norm)
            elif not (self._update_readable and os.path.isfile(target)):
                reason = "names an existing file fnrun did not read as part of the package; fnrun does not overwrite it"
        if reason is not None:
            raise InputError(f"resource path {path!r} {reason}")

    def _under_a_file(self, pure: PurePosixPath) -> str | None:
        """Why a new file cannot be made at `pure`: its nearest existing parent is not a directory."""
        for parent in pure.parents:
            if os.path.lexists(self.root / parent):
                return None if os.path.isdir(self.root / parent) else f"is under {parent.as_posix()!r}, which is not a directory"
        return None

    def _real_dir(self, rel: str) -> str:
        """Where a package directory really is: its parent's real path plus its name, unless it
        is a symlink (one lstat per directory, however many files it holds)."""
        real = self._real_dirs.get(rel)
        if real is None:
            head, name = posixpath.split(rel)
            real = os.path.join(self._real_dir(head), name)
            if os.path.islink(real):
                real = os.path.realpath(real)
            self._real_dirs[rel] = real
        return real


class PlannedFiles:
    """The files one write lands, by normal path: none may be another's directory (`a.yaml` and
    `a.yaml/b.yaml` would fail only at the rename, half written)."""

    def __init__(self) -> None:
        self._files: set[str] = set()
        self._directories: set[str] = set()

    def add(self, path: str) -> None:
        parents = [parent.as_posix() for parent in PurePosixPath(path).parents][:-1]  # not "."
        other = next((p for p in self._files if p.startswith(path + "/")), None) if path in self._directories else None
        other = other or next((p for p in parents if p in self._files), None)
        if other is not None:
            raise InputError(f"resource paths {other!r} and {path!r} cannot both be files: one is the other's directory")
        self._files.add(path)
        self._directories.update(parents)


def normal(path: str) -> str:
    """A path as the file system resolves it, `.` parts and doubled slashes gone (`..` is refused
    before this matters): `./app.yaml` is the file fnrun read as `app.yaml`."""
    return PurePosixPath(path).as_posix() if path else path


def _named_wrongly(norm: str) -> str | None:
    """Why a file fnrun did not read may not be written by that name, from the name alone."""
    parts = norm.split("/")
    hidden = next((at for at, part in enumerate(parts) if part.startswith(".")), None)
    if hidden is not None:
        where = "is a hidden file" if hidden == len(parts) - 1 else f"is in a hidden directory ({parts[hidden]}/)"
        return f"{where}; fnrun writes no new file there"
    if "\\" in norm or ":" in parts[0]:
        return "holds a backslash or a drive letter; fnrun creates files only with '/' between directories"
    try:
        norm.encode("utf-8")
    except UnicodeEncodeError:
        return "is not UTF-8"
    if not (parts[-1].endswith(YAML_SUFFIXES) or parts[-1] == KPTFILE):
        return f"is not a YAML file (*.yaml, *.yml or {KPTFILE}); fnrun creates no other kind"
    return None


def check_path(root: Path, path: str) -> Path:
    """The file a path names inside root, refusing absolute paths, `..` and symlink escapes (for
    reading a file a result names; a write asks a PathChecker that knows what was read)."""
    return PathChecker(Path(root)).contained(path)
