"""What the package reader left alone, and the warning lines that say so.

A package is a directory of YAML kept in git, and real repositories hold YAML that is not for
functions: Helm values files, Chart.yaml, mkdocs configs with application tags, a file with a
duplicate key. None of them stops a command: the reader keeps such a document as part of its
file's layout (so the file keeps every byte) and notes it here. A document that is a resource but
cannot be read faithfully (a duplicate key, an application tag) is an error only where a function
would receive it (`unreadable_for`), since there its value would be a guess."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING, Any, Callable, Iterable, Protocol

from ..errors import InputError
from ..yamlio import fast

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


def unreadable_for(notes: Iterable[Note], receives: Callable[[Note], str | None]) -> None:
    """Refuse a resource that could not be read faithfully where it matters: `receives(note)` says
    why (e.g. "function X would receive"), or None. One line naming the file, line and reason."""
    for note in notes:
        if note.resource and note.problem is not None:
            why = receives(note)
            if why is not None:
                raise InputError(f"{note.path}:{note.line}: {note.problem} in a resource {why}; the data is ambiguous, nothing was run (fix the file, or leave it out in .krmignore)")


def require_krm(notes: Iterable[Note], command: str) -> None:
    """kpt's render and fn eval take KRM only: a YAML document that is not a resource (a
    kustomization file is read as one) is refused with one line naming it, nothing run."""
    for note in notes:
        if not note.resource:
            why = f" ({note.problem})" if note.problem else ""
            raise InputError(f"{note.path}:{note.line}: not a KRM resource{why}; {command} refuses it too (only kustomization files are exempt; leave it out in .krmignore)")


class _Sink(Protocol):
    def add(self, item: "Resource") -> None: ...

    def reset(self) -> None: ...


class KeepOddFiles:
    """In front of `fnrun sink`'s writer: an input item that cannot be read faithfully (`kpt fn
    source` lists odd files verbatim), bound for a file the package already holds as such a file,
    is dropped, so that file keeps its bytes; `kept` names those files."""

    def __init__(self, writer: _Sink, notes: Iterable[Note]) -> None:
        self.writer = writer
        self.odd_files = {note.path for note in notes if note.problem is not None}
        self.kept: set[str] = set()

    def add(self, item: "Resource") -> None:
        if item.path in self.odd_files:
            try:
                fast.parse(item.text, item.path or "")
            except fast.OddDocument:
                self.kept.add(item.path)  # type: ignore[arg-type]
                return
        self.writer.add(item)

    def reset(self) -> None:
        self.kept.clear()
        self.writer.reset()
