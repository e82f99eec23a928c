"""Paths as the repository sees them: a `--check` diff that `git apply` takes from the
repository root, and GitHub annotations that point at the right file.

Inside a git work tree, paths are relative to its top level (found by walking up to the `.git`
entry: no git process, no network); elsewhere a diff keeps package paths (apply it inside the
package) and an annotation is relative to the working directory, as a workflow step's is."""

from __future__ import annotations

import os
from pathlib import Path


def git_top(start: Path) -> Path | None:
    """The work tree holding `start` (a directory or a `.git` file of a worktree/submodule)."""
    try:
        here = start.resolve()
    except OSError:
        return None
    for candidate in (here, *here.parents):
        if (candidate / ".git").exists():
            return candidate
    return None


def repo_prefix(root: Path | None) -> str:
    """The package's place in its repository (`deploy/app/`), '' outside one or at its top."""
    if root is None:
        return ""
    top = git_top(root)
    if top is None:
        return ""
    inside = Path(os.path.relpath(root.resolve(), top)).as_posix()
    return "" if inside == "." else inside + "/"


def repo_path(root: Path, path: str) -> str:
    """A package path (`app/x.yaml`) relative to the repository top, else to the working directory."""
    top = git_top(root)
    target = (root / path).absolute()
    if top is not None:
        return Path(os.path.relpath(target.resolve() if target.exists() else target, top)).as_posix()
    return Path(os.path.relpath(target)).as_posix()


def as_typed(message: str, root: Path) -> str:
    """`message` with a leading package path (`app/x.yaml:6: ...`, `app/x.yaml: ...`) joined to
    the package directory as the user typed it (`deploy/app/x.yaml:6: ...`, or absolute when
    they gave an absolute one), when it names something in that package; else unchanged."""
    head, sep, rest = message.partition(": ")
    path, colon, line = head.rpartition(":")
    if not (colon and line.isdigit()):
        path, colon, line = head, "", ""
    if not sep or not path or len(path) > 4096 or Path(path).is_absolute() or not os.path.lexists(root / path):
        return message
    return f"{(root / path).as_posix()}{colon}{line}{sep}{rest}"
