"""A Dockerfile's instructions, the images it builds FROM and the context files it copies.

Read line by line with string operations (no regular expression over a file a package may ship)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from fnmatch import fnmatch
from pathlib import Path

from docker.utils.build import exclude_paths


def instructions(text: str) -> Iterator[tuple[str, str]]:
    """(KEYWORD, arguments) for each Dockerfile instruction, continuation lines joined."""
    pending = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not pending and (not line or line.startswith("#")):
            continue
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        full = (pending + line).strip()
        pending = ""
        if full:
            keyword, _, rest = full.partition(" ")
            yield keyword.upper(), rest.strip()
    if pending.strip():
        keyword, _, rest = pending.strip().partition(" ")
        yield keyword.upper(), rest.strip()


def substitute_base(word: str, base: str) -> str:
    """`${BASE_IMAGE}`, `${BASE_IMAGE:-default}` and `$BASE_IMAGE` in a FROM word become `base`."""
    if word.startswith("${BASE_IMAGE") and "}" in word:
        inside, _, rest = word[2:].partition("}")
        if inside == "BASE_IMAGE" or inside.startswith("BASE_IMAGE:-"):
            return base + rest
    if word.startswith("$BASE_IMAGE") and not word[len("$BASE_IMAGE"):][:1].isalnum():
        return base + word[len("$BASE_IMAGE"):]
    return word


def from_images(text: str, base: str) -> list[str]:
    """The images a Dockerfile builds FROM (stage names and scratch left out)."""
    stages: set[str] = set()
    images: list[str] = []
    for keyword, args in instructions(text):
        if keyword != "FROM":
            continue
        words = [w for w in args.split() if not w.startswith("--")]
        image = substitute_base(words[0], base)
        if len(words) >= 3 and words[1].upper() == "AS":
            stages.add(words[2])
        if image not in stages and image != "scratch":
            images.append(image)
    return images


def _json_words(args: str) -> list[str]:
    """The strings of a JSON-form instruction (`["a", "b"]`), backslash escapes kept as written."""
    words: list[str] = []
    current: list[str] | None = None
    escaped = False
    for char in args:
        if current is None:
            if char == '"':
                current = []
            continue
        if escaped:
            current.append(char)
            escaped = False
        elif char == "\\":
            current.append(char)
            escaped = True
        elif char == '"':
            words.append("".join(current))
            current = None
        else:
            current.append(char)
    return words


def copy_sources(text: str) -> list[str] | None:
    """Context paths a Dockerfile COPYs or ADDs; None when it takes the whole context."""
    sources: list[str] = []
    for keyword, args in instructions(text):
        if keyword not in ("COPY", "ADD"):
            continue
        words = _json_words(args) if args.startswith("[") else args.split()
        if any(w.startswith("--from") for w in words):
            continue
        words = [w for w in words if not w.startswith("--")][:-1]
        for word in words:
            cleaned = os.path.normpath(word.lstrip("/")) if "://" not in word else word
            if cleaned in (".", ""):
                return None
            sources.append(cleaned)
    return sources


def wanted(path: str, sources: list[str] | None) -> bool:
    """Whether a context file is among the Dockerfile's COPY/ADD sources."""
    if sources is None:
        return True
    return any(path == s or path.startswith(s + "/") or fnmatch(path, s)
               or fnmatch(path.split("/", 1)[0], s) for s in sources)


def dockerignore(context: Path) -> list[str]:
    """The context's .dockerignore patterns, read the way docker-py reads them."""
    path = context / ".dockerignore"
    if not path.is_file():
        return []
    return [line.strip() for line in path.read_text().splitlines()
            if line.strip() and not line.strip().startswith("#")]


def context_files(context: Path, dockerfile: str) -> list[str]:
    """Files (relative paths) docker-py would send as the build context."""
    found = exclude_paths(str(context), dockerignore(context), dockerfile=dockerfile)
    return sorted(p for p in found
                  if (context / p).is_file() or (context / p).is_symlink())
