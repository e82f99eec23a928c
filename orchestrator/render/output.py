"""What kpt's out-of-place forms of render print or refuse: `-o DIR` only into a directory that
does not exist yet, the Kptfiles after the other resources on stdout, and `-o unwrap` as the
files' own YAML, without the path/index annotations that only mean something inside a
ResourceList."""

from __future__ import annotations

from pathlib import Path

from ..errors import InputError
from ..resource import Resource
from ..write.body import resolve_body
from .kptfile import is_kptfile


def check_output_dir(target: Path) -> None:
    """kpt refuses `-o DIR` when DIR exists, empty or not: the output would mix with what is there."""
    if target.exists() or target.is_symlink():
        raise InputError(f"-o {target}: directory {str(target)!r} already exists; render out of place into a new directory")


def kptfiles_last(resources: list[Resource]) -> list[Resource]:
    """The order kpt prints a rendered package in: every other resource, then the Kptfiles."""
    return [r for r in resources if not is_kptfile(r)] + [r for r in resources if is_kptfile(r)]


def unwrapped(resources: list[Resource]) -> str:
    """A plain YAML stream, each resource as it would be written to its file (comments kept,
    fnrun's and kpt's path/index annotations gone)."""
    return "---\n".join(resolve_body(r, None) for r in resources)
