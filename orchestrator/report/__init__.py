"""How a run is shown and reported: a live display in a terminal, plain lines elsewhere, workflow
commands in GitHub Actions, and the results document (text, JSON, YAML) on stdout.

Kept light on import: the pipeline imports `report.plain` on every run; rich loads only for the
live display."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import IO

from .base import Display, RunSummary


def choose(
    stream: IO[str], quiet: bool = False, verbose: bool = False, root: Path | None = None, environ: Mapping[str, str] = os.environ
) -> Display:
    """The display for where stderr goes: GitHub Actions, a terminal (live, unless --quiet), or
    anything else (plain lines). `root` is the package, for annotations that point into it."""
    if environ.get("GITHUB_ACTIONS") == "true":
        from .github import GitHubDisplay

        return GitHubDisplay(stream, quiet=quiet, verbose=verbose, root=root)
    if not quiet and _is_terminal(stream) and environ.get("TERM", "") != "dumb":
        from .live import LiveDisplay

        return LiveDisplay(stream, quiet=quiet, verbose=verbose)
    from .plain import PlainEvents

    return PlainEvents(stream, quiet=quiet, verbose=verbose)


def _is_terminal(stream: IO[str]) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


__all__ = ["Display", "RunSummary", "choose"]
