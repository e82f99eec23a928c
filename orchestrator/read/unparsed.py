"""The package as kpt fn eval reads it, refused at once for every file it cannot take.

The reader stops at the first file that is not YAML at all (a Helm template, a file with a tab
where YAML wants blanks); one such file per run would make a repository of templates take one run
per file to get past. When the read fails so, every file is read again, one by one (only on this
error path), and the refusal names every file that does not parse together with every document
that is not KRM, with the `.krmignore` lines that leave them all out (`notices.refuse`)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ..errors import InputError
from .notices import Note, Refused, refuse, refused_as_not_krm, unreadable
from .package import Package, package_files, read_package, read_path


def read_or_refuse(root: Path, names: tuple[str, ...], command: str, receives: Callable[[Note], str | None],
                   workers: int | None = None) -> Package:
    """`read_package(root, names, kustomizations=True)`; where a file does not parse, one error for
    every file the command refuses: YAML that does not parse, documents that are not KRM, and
    resources a function would receive that cannot be read faithfully (`receives`, as
    `notices.unreadable_for`). A package that reads is the caller's to judge (`notices.refuse`)."""
    try:
        return read_package(root, names, kustomizations=True, workers=workers)
    except InputError as first:
        _refuse_every_file(root, names, command, receives, first)
        raise


def _refuse_every_file(root: Path, names: tuple[str, ...], command: str, receives: Callable[[Note], str | None], first: InputError) -> None:
    """Raise the refusal of every file, when `first` is a file's parse error; else return."""
    try:
        rels = package_files(root, names)
    except InputError:  # the package itself cannot be listed: `first` says why
        return
    broken: list[Refused] = []
    notes: list[Note] = []
    for rel in rels:
        try:
            source, _ = read_path(root, rel, kustomizations=True)
        except InputError as err:
            broken.append(_parse_error(rel, str(err), command))
            continue
        notes += source.notes
    if not broken or not str(first).startswith(broken[0].path + ":"):
        return  # not a file's YAML at fault (a directory, a symlink): that error stands
    if any(entry.path.rsplit("/", 1)[-1] in names for entry in broken):
        return  # a Kptfile that does not parse is to be fixed, not left out: its error stands
    refuse(broken + refused_as_not_krm(notes, command) + unreadable(notes, receives), root)


def _parse_error(rel: str, message: str, command: str) -> Refused:
    """A parse error `rel:LINE: problem` (or `rel: problem`) as a refused file."""
    rest = message[len(rel) + 1 :] if message.startswith(rel + ":") else message
    number, colon, problem = rest.partition(": ")
    line = int(number) if colon and number.isdigit() else 1
    reason = problem if colon and number.isdigit() else rest.lstrip(": ")
    return Refused(rel, line, f"not YAML ({reason})", f"{command} refuses {{it}} too, nothing was run")
