"""The kinds of function a declaration can name, in one place: `container:` (an image), `exec:`
(a program on this machine) and `starlark:` (a Starlark file, kustomize's). Each member is its own
spelling as a string (a `StrEnum`), so YAML keys, JSON reports and command lines read the same."""

from __future__ import annotations

from enum import StrEnum


class Kind(StrEnum):
    CONTAINER = "container"
    EXEC = "exec"
    STARLARK = "starlark"


#: Every kind, in the order a message lists them.
KINDS: tuple[Kind, ...] = tuple(Kind)
