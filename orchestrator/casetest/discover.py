"""Which directories are cases: every directory, at any depth under the given paths, that holds
`.expected/` (kpt's ScanTestCases), named by its path as the command line reached it (`fn-render/basicpipeline`)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .config import EXPECTED


@dataclass(frozen=True)
class Case:
    path: Path
    name: str


def find_cases(paths: list[Path]) -> list[Case]:
    """The cases under each path in path order (a path that is itself a case is one); a path
    given twice, or inside another given path, yields its cases once."""
    found: dict[Path, Case] = {}
    for root in paths:
        for case in case_dirs(root):
            found.setdefault(case.resolve(), Case(case, case.as_posix()))
    return list(found.values())


def case_dirs(directory: Path) -> list[Path]:
    """The directory itself when it is a case, then every case below it, in path order."""
    cases = [directory] if (directory / EXPECTED).is_dir() else []
    try:
        entries = sorted(p for p in directory.iterdir() if p.is_dir() and not p.is_symlink() and p.name not in (EXPECTED, ".git"))
    except OSError:
        return cases
    for entry in entries:
        cases += case_dirs(entry)
    return cases


def selected(cases: list[Case], pattern: str | None) -> list[Case]:
    """pytest's -k for names: cases whose name contains the pattern (`not X` excludes)."""
    if not pattern:
        return cases
    if pattern.startswith("not "):
        return [case for case in cases if pattern[4:] not in case.name]
    return [case for case in cases if pattern in case.name]
