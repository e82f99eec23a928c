"""The linter and the type checker pass over the tree, as configured in pyproject.toml: ruff (lint and
import order; `ruff check --fix` mends most of what it finds) over the whole repository, mypy over
orchestrator/ and functions/. Each runs as its own process; a failure shows its findings."""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _run(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *argv], cwd=REPO, capture_output=True, text=True, timeout=600)


def test_ruff_finds_nothing() -> None:
    result = _run("ruff", "check", "--no-cache", "--output-format", "concise", ".")
    assert result.returncode == 0, f"ruff check:\n{result.stdout}{result.stderr}"


def test_mypy_finds_nothing() -> None:
    # its cache outside the tree: a rerun checks only what changed
    result = _run("mypy", "--cache-dir", str(Path(tempfile.gettempdir()) / "fnrun-mypy-cache"))
    assert result.returncode == 0, f"mypy:\n{result.stdout}{result.stderr}"
