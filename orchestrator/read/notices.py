"""What the package reader left alone, and the warning lines that say so.

A package is a directory of YAML kept in git, and real repositories hold YAML that is not for
functions: Helm values files, Chart.yaml, mkdocs configs with application tags, a file with a
duplicate key. None of them stops a command: the reader keeps such a document as part of its
file's layout (so the file keeps every byte) and notes it here. A document that is a resource but
cannot be read faithfully (a duplicate key, an application tag) is an error only where a function
would receive it (`unreadable_for`), since there its value would be a guess."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Protocol

from ..errors import InputError
from ..yamlio import fast
from .krmignore import IGNORE_FILE, KrmIgnore

if TYPE_CHECKING:
    from ..resource import Resource


@dataclass(frozen=True)
class Note:
    """One document left alone: where it is, and why (None: it is YAML but not a KRM resource)."""

    path: str
    line: int  # 1-based, where the document (or its problem) is
    problem: str | None = None  # a duplicate key or an application tag
    resource: bool = False  # it reads (leniently) as a resource
    data: Any = None  # its lenient value, for resources: which functions would receive it


def warning_lines(notes: Iterable[Note]) -> list[str]:
    """One line per file that could not be read faithfully, then one line for all the files that
    hold YAML that is not KRM (named by count and the first of them, not one line each)."""
    lines: list[str] = []
    warned: set[str] = set()
    not_krm: list[str] = []
    for note in notes:
        if note.problem is not None:
            if note.path not in warned:
                warned.add(note.path)
                lines.append(f"fnrun: warning: {note.path}:{note.line}: {note.problem}; left as it is")
        elif note.path not in not_krm:
            not_krm.append(note.path)
    not_krm = [path for path in not_krm if path not in warned]
    if not_krm:
        files = "1 file holds" if len(not_krm) == 1 else f"{len(not_krm)} files hold"
        lines.append(f"fnrun: warning: {files} YAML that is not a KRM resource (first: {not_krm[0]}); left as it is, no function sees it")
    return lines


def warn(notes: Iterable[Note], stream: IO[str] | None = None) -> None:
    """Print `warning_lines` on stderr (human output; stdout carries only data)."""
    out = stream or sys.stderr
    for line in warning_lines(notes):
        print(line, file=out)


def unreadable_for(notes: Iterable[Note], receives: Callable[[Note], str | None], root: Path | str | None = None) -> None:
    """Refuse the resources that could not be read faithfully where it matters: `receives(note)`
    says why (e.g. "function X would receive"), or None. One error for all of them (`refuse`)."""
    refuse(unreadable(notes, receives), root)


def require_krm(notes: Iterable[Note], command: str, root: Path | str | None = None) -> None:
    """kpt's render and fn eval take KRM only: every YAML document that is not a resource (a
    kustomization file is read as one) is refused, nothing run, in one error (`refuse`)."""
    refuse(refused_as_not_krm(notes, command), root)


@dataclass(frozen=True)
class Refused:
    """A file a command will not read, where (1-based line) and why, and what that means."""

    path: str
    line: int
    reason: str
    outcome: str  # "{it}" stands for the file or the files


def refused_as_not_krm(notes: Iterable[Note], command: str) -> list[Refused]:
    """The documents that are not KRM, which `command` (kpt's render, fn eval) refuses."""
    return [
        Refused(note.path, note.line, "not a KRM resource" + (f" ({note.problem})" if note.problem else ""),
                f"{command} refuses {{it}} too (only kustomization files are exempt), nothing was run")
        for note in notes if not note.resource
    ]


def unreadable(notes: Iterable[Note], receives: Callable[[Note], str | None]) -> list[Refused]:
    """The resources read leniently that a function would receive (`receives` says which)."""
    found = []
    for note in notes:
        if note.resource and note.problem is not None:
            why = receives(note)
            if why is not None:
                found.append(Refused(note.path, note.line, f"{note.problem} in a resource {why}", "the data is ambiguous, nothing was run (or fix {it})"))
    return found


#: How many refused files the error lists with their reason; the `.krmignore` lines name them all.
LISTED = 10


def refuse(refused: Iterable[Refused], root: Path | str | None = None) -> None:
    """One error for every refused file, so one edit gets past the refusal. For one file, the
    house's one line, naming the line to add to which `.krmignore`. For more, the first line names
    the first of them and how many there are; then the first `LISTED` with their reasons; then the
    lines to paste into each `.krmignore` that decides about them (the package root's, or a
    subpackage's: a parent's patterns stop at a subpackage), every file's."""
    files: dict[str, Refused] = {}
    for entry in sorted(refused, key=lambda e: (e.path.split("/"), e.line)):  # in the walk's order
        files.setdefault(entry.path, entry)
    if not files:
        return
    first, count = next(iter(files.values())), len(files)
    blocks = _ignore_lines(list(files), root)
    if count == 1:  # the house's one line: the line to add, and where
        raise InputError(f"{first.path}:{first.line}: {first.reason}; {first.outcome.format(it='it')}; "
                         f"leave it out in .krmignore: add the line {blocks[1]} to {blocks[0][len('add to ') : -1]}")
    head = (f"{first.path}:{first.line}: {first.reason}, and {count - 1} more file{'s' if count > 2 else ''} "
            f"({count} in all); {first.outcome.format(it='them')}; leave them all out in .krmignore:")
    listing = [f"  {e.path}:{e.line}: {e.reason}" for e in list(files.values())[:LISTED]]
    if count > LISTED:
        listing.append(f"  ... and {count - LISTED} more (every one is in the lines below)")
    raise InputError("\n".join([head, *listing, *blocks]))


def _ignore_lines(paths: list[str], root: Path | str | None) -> list[str]:
    """For each deciding `.krmignore`, a line naming it, then the block to paste: one anchored
    pattern per file."""
    ignore = KrmIgnore(root if root is not None else ".")
    owners: dict[str, list[str]] = {}
    for path in paths:
        owners.setdefault(ignore.owner(path) if root is not None else "", []).append(path)
    lines: list[str] = []
    for base, owned in owners.items():
        where = os.path.join(os.fspath(root), base, IGNORE_FILE) if root is not None else IGNORE_FILE
        lines.append(f"add to {where}:")
        lines += [pattern(path[len(base):]) for path in owned]
    return lines


def pattern(path: str) -> str:
    """The `.krmignore` (gitignore) line that matches exactly `path`, relative to its directory:
    anchored with `/`, its wildcard characters and trailing blanks escaped."""
    escaped = "".join("\\" + c if c in "*?[\\" else c for c in path)
    body = escaped.rstrip(" ")
    return "/" + body + "\\ " * (len(escaped) - len(body))


class _Sink(Protocol):
    def add(self, item: Resource) -> None: ...

    def reset(self) -> None: ...


class KeepOddFiles:
    """In front of `fnrun sink`'s writer: an input item that cannot be read faithfully (`kpt fn
    source` lists odd files verbatim), bound for a file the package already holds as such a file,
    is dropped, so that file keeps its bytes; `kept` names those files."""

    def __init__(self, writer: _Sink, notes: Iterable[Note]) -> None:
        self.writer = writer
        self.odd_files = {note.path for note in notes if note.problem is not None}
        self.kept: set[str] = set()

    def add(self, item: Resource) -> None:
        if item.path in self.odd_files:
            try:
                fast.parse(item.text, item.path or "")
            except fast.OddDocument:
                self.kept.add(item.path)
                return
        self.writer.add(item)

    def reset(self) -> None:
        self.kept.clear()
        self.writer.reset()
