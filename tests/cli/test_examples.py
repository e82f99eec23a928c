"""Every example fnrun shows runs as written: the lines under "Example(s):" in each command's
--help, and every `fnrun` line in the `sh` blocks of the README and of every page under docs/, run
by bash from a directory holding a copy of samples/ and functions/, with the exit code the example
promises (0 unless its comment says `exit N`).
An example that pipes into kubectl needs a cluster: its fnrun side runs, and what it would send
must hold no Kptfile and no local-config resource."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from testing.pipeline_helpers import REPO, fnrun

pytestmark = pytest.mark.usefixtures("test_images")

# wrap and xargs run inside function images, reading a ResourceList on stdin (test_wrap.py runs them)
COMMANDS = ["", "run", "render", "source", "sink", "list", "merge", "merge3", "explain", "doctor", "cache info", "cache prune"]


def _help_examples() -> list[str]:
    found = []
    for command in COMMANDS:
        text = fnrun(*command.split(), "--help").stdout
        lines = text.splitlines()
        start = next(i for i, line in enumerate(lines) if line.strip().startswith("Example"))
        found += [line.strip() for line in lines[start + 1 :] if line.strip().startswith(("fnrun ", "cd "))]
    return found


DOCUMENTS = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]


def _readme_examples() -> list[list[str]]:
    """The `sh` blocks of the README and the docs, as lists of command lines (a block runs in one
    copy, in order: `fnrun sink` reads what `fnrun source` wrote before it)."""
    return [block for document in DOCUMENTS for block in _sh_blocks(document)]


def _sh_blocks(document: Path) -> list[list[str]]:
    blocks: list[list[str]] = []
    current: list[str] | None = None
    for line in document.read_text().splitlines():
        if line.startswith("```"):
            current = [] if line.strip() == "```sh" and current is None else None
            if current is not None:
                blocks.append(current)
            continue
        if current is not None and line.startswith("fnrun "):
            current.append(line)
    return [block for block in blocks if block]


def _expected(line: str) -> int:
    """`# ... exit 3 ...` in the example's comment; 0 otherwise."""
    comment = line.partition(" # ")[2]
    words = comment.replace(":", " ").replace(",", " ").replace("(", " ").replace(")", " ").split()
    for word, following in zip(words, words[1:]):
        if word == "exit" and following.isdigit():
            return int(following)
    return 0


def _workspace(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A copy of samples/ and functions/ (the docs run a catalog function as an exec function),
    and a `fnrun` on PATH that is this checkout's."""
    work = tmp_path / "work"
    shutil.copytree(REPO / "samples", work / "samples")
    shutil.copytree(REPO / "functions", work / "functions", ignore=shutil.ignore_patterns("__pycache__"))
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    shim = bin_dir / "fnrun"
    shim.write_text(f"#!/bin/sh\nexec {sys.executable} -m orchestrator \"$@\"\n")
    shim.chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "GITHUB_ACTIONS": "", "PYTHONPATH": str(REPO)}
    return work, env


def _run_example(line: str, work: Path, env: dict[str, str]) -> None:
    command, pipe, consumer = line.partition(" # ")[0].partition("| kubectl")
    done = subprocess.run(["bash", "-c", command.rstrip().rstrip("|").rstrip()], cwd=work, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == _expected(line), f"{line}\n{done.stderr}"
    assert "Traceback" not in done.stderr, done.stderr
    if pipe:  # what kubectl would get: resources for a cluster only
        from orchestrator.yamlio import fast

        for document in fast.load_all(done.stdout, "stdout"):
            if document is None:
                continue
            annotations = (document.get("metadata") or {}).get("annotations") or {}
            assert document.get("kind") != "Kptfile", line
            assert str(annotations.get("config.kubernetes.io/local-config")).lower() != "true", (line, document)


@pytest.mark.parametrize("line", _help_examples())
def test_every_help_example_runs_as_written(tmp_path: Path, line: str) -> None:
    work, env = _workspace(tmp_path)
    _run_example(line, work, env)


@pytest.mark.parametrize("block", _readme_examples(), ids=lambda block: block[0].split("#")[0].strip()[:40])
def test_every_readme_example_runs_as_written(tmp_path: Path, block: list[str]) -> None:
    work, env = _workspace(tmp_path)
    for line in block:
        _run_example(line, work, env)


def test_the_examples_are_found() -> None:
    assert len(_help_examples()) >= 15
    assert sum(len(block) for block in _sh_blocks(REPO / "README.md")) >= 3
    assert sum(len(block) for block in _readme_examples()) >= 60
    pages = {path.relative_to(REPO).as_posix() for path in DOCUMENTS if _sh_blocks(path)}
    assert {"docs/getting-started/nginx.md", "docs/guides/ci.md", "docs/functions/catalog/set-labels.md"} <= pages
