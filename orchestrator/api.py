"""The library API: what the CLI calls, and what tests and other programs should call.

Each entry reads like the data flow: read → (functions) → write."""

from __future__ import annotations

import sys
from pathlib import Path

from . import resourcelist, writer
from .reader import Package, read_package
from .writer import WritePlan
from .yamlio import fast


def source(root: Path | str) -> str:
    """The package as a config.kubernetes.io/v1 ResourceList, comments and origin annotations included."""
    package = read_package(root)
    return resourcelist.encode(package.resources)


def sink(root: Path | str, content: str, source_name: str = "stdin") -> WritePlan:
    """Write a ResourceList, List or plain stream into root (created when missing).

    An existing root is brought in line with the input: files whose resources are unchanged keep
    their bytes, changed ones are edited in place, and resource files the input no longer holds are
    deleted (so `fnrun source d | filter | fnrun sink d` works like an in-place run)."""
    root = Path(root)
    original = read_package(root) if root.exists() else None
    decoded = resourcelist.decode(content, source_name)
    return writer.write(root, decoded.items, original)


def read_stdin() -> str:
    """All of stdin as text, with invalid UTF-8 reported as an input error."""
    return fast.decode(sys.stdin.buffer.read(), "stdin")


__all__ = ["Package", "WritePlan", "read_package", "sink", "source", "read_stdin"]
