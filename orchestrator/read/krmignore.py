"""kpt's `.krmignore`: gitignore patterns that take paths out of a package.

As kpt does (checked against kpt 1.0.0-beta.56): the file counts in the package root and in each
subpackage root (a directory with a Kptfile), its patterns are relative to its own directory, and
a subpackage answers to its own file only — the parent's patterns stop at the subpackage, though
they can exclude the subpackage's directory as a whole. A `.krmignore` in a plain directory is not
read. Reading and write-back share one `KrmIgnore`, so an excluded file is neither read, written
nor deleted."""

from __future__ import annotations

import os
import posixpath
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import InputError

if TYPE_CHECKING:
    import pathspec

IGNORE_FILE = ".krmignore"
PACKAGE_FILE = "Kptfile"


@dataclass(frozen=True)
class _Rules:
    """The patterns in force inside one directory: those of the package root `base`."""

    base: str  # slash-separated directory, "" for the root, else ending in "/"
    spec: pathspec.PathSpec | None


class KrmIgnore:
    """Which paths of the package under `root` the `.krmignore` files exclude."""

    def __init__(self, root: Path | str) -> None:
        self.root = os.fspath(root)
        self._rules: dict[str, _Rules] = {}

    def excluded_entry(self, directory: str, name: str, is_dir: bool) -> bool:
        """Whether `name` in `directory` ("" or "a/b/") is excluded; for the walk that reads a
        package, which has already checked the directories above."""
        rules = self._rules_in(directory)
        if rules.spec is None:
            return False
        rel = directory[len(rules.base):] + name + ("/" if is_dir else "")
        return rules.spec.match_file(rel if rel.isascii() else _matchable(rel))

    def excluded(self, path: str) -> str | None:
        """The `.krmignore` file that excludes `path` (a slash-separated file path), or None."""
        directory = ""
        parts = path.split("/")
        for position, name in enumerate(parts):
            is_dir = position < len(parts) - 1
            if self.excluded_entry(directory, name, is_dir):
                return self._rules_in(directory).base + IGNORE_FILE
            directory += name + "/"
        return None

    def owner(self, path: str) -> str:
        """The directory ("" or "a/b/") whose `.krmignore` decides about `path`: the package root,
        or the nearest subpackage root above it."""
        directory = path.rsplit("/", 1)[0] + "/" if "/" in path else ""
        return self._rules_in(directory).base

    def _rules_in(self, directory: str) -> _Rules:
        rules = self._rules.get(directory)
        if rules is None:
            full = os.path.join(self.root, directory)
            if directory == "" or os.path.isfile(os.path.join(full, PACKAGE_FILE)):
                rules = _Rules(directory, _load(os.path.join(full, IGNORE_FILE), directory + IGNORE_FILE))
            else:
                parent = posixpath.dirname(directory.rstrip("/"))
                rules = self._rules_in(parent + "/" if parent else "")
            self._rules[directory] = rules
        return rules


def _matchable(rel: str) -> str:
    """A name as pathspec can match it: one that is not UTF-8 comes from os.scandir with its odd
    bytes as lone surrogates, which the matcher cannot encode; each becomes U+FFFD, one character
    for each odd byte."""
    try:
        rel.encode("utf-8")
        return rel
    except UnicodeEncodeError:
        return os.fsencode(rel).decode("utf-8", "replace")


def _load(path: str, shown: str) -> pathspec.PathSpec | None:
    """A `.krmignore` file's patterns (pathspec is imported only here: the reader also runs inside
    function images as part of `fnrun wrap`, which have no pathspec and no `.krmignore` to read)."""
    try:
        with open(path, encoding="utf-8") as handle:
            lines = handle.read().splitlines()
    except (FileNotFoundError, NotADirectoryError):
        return None
    except (OSError, UnicodeDecodeError) as err:
        reason = getattr(err, "strerror", None) or "not UTF-8 text"
        raise InputError(f"{shown}: cannot read: {reason}") from None
    import pathspec

    try:
        return pathspec.GitIgnoreSpec.from_lines(lines)
    except ValueError as err:
        raise InputError(f"{shown}: {err}") from None
