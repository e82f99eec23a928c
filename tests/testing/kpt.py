"""Shared by test_kpt_conformance.py and the tests that check other paths against it."""

from __future__ import annotations

import textwrap
from pathlib import Path

from orchestrator.yamlio import fast

ON = {"FNRUN_BUILTIN_CATALOG": "1"}


CATALOG = "ghcr.io/kptdev/krm-functions-catalog"


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(textwrap.dedent(text).lstrip())


def docs(path: Path) -> list[dict]:
    return [d for d in fast.load_all(path.read_text(), path.name) if d is not None]
