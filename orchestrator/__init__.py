"""fnrun: run KRM configuration functions over a package and write back only what changed.

The library API lives in `orchestrator.api`; the CLI in `orchestrator.cli` is a thin shell over it.
"""

# No `from __future__ import annotations` here: it would bind the package's name `annotations`,
# which is the orchestrator.annotations module's.
import os
import sys

DISTRIBUTION = "fnrun"
#: What the completion scripts set when the shell asks fnrun for completions (typer's naming):
#: only the CLI answers it, so the launcher leaves every command line to the CLI then.
COMPLETE_VAR = "_FNRUN_COMPLETE"


def version() -> str:
    """The installed distribution's version (what `pip show fnrun` says), or "0+unknown" from a
    source tree never installed.

    Read from the distribution's own metadata file, found as importlib.metadata finds it (the first
    `fnrun-*.dist-info` or `.egg-info` along sys.path): importlib.metadata parses it as an email
    message, and its modules (email, pathlib, zipfile, csv) cost more than all of `fnrun --version`
    otherwise does. Anything less plain than one metadata directory with a one-line Version header
    is left to importlib.metadata itself."""
    found = _version_on_path(sys.path)
    if found is not None:
        return found
    from importlib import metadata

    try:
        return metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:  # run from a source tree that was never installed
        return "0+unknown"


def _version_on_path(entries: list[str]) -> str | None:
    """The Version header of the first of fnrun's metadata directories along `entries`; None when
    there is none, or where importlib.metadata might see it otherwise (two in one directory, a
    zip or an egg on the path, a metadata file it would read and this does not)."""
    for entry in entries:
        if not isinstance(entry, str):
            return None
        where = entry or "."
        try:
            names = os.listdir(where)
        except OSError:
            if os.path.exists(where):  # a zip archive, which importlib.metadata also searches
                return None
            continue
        if where.lower().endswith(".egg"):
            return None
        ours = [name for name in names if _names_fnrun(name)]
        if len(ours) > 1:
            return None
        if ours:
            return _version_header(os.path.join(where, ours[0]))
    return None


def _names_fnrun(name: str) -> bool:
    """Whether a directory entry is fnrun's metadata as importlib.metadata matches it: the part
    before the first "-" of `NAME-VERSION.dist-info` (or `.egg-info`), in any case."""
    low = name.lower()
    return low.endswith((".dist-info", ".egg-info")) and low.rpartition(".")[0].partition("-")[0] == DISTRIBUTION


def _version_header(metadata_dir: str) -> str | None:
    """The first Version header of the directory's METADATA (a wheel's) or PKG-INFO (an egg's), as
    the email parser importlib.metadata uses reads it; None for anything less plain (a line that is
    no header before it, a folded or non-ASCII value)."""
    for file in ("METADATA", "PKG-INFO"):
        try:
            with open(os.path.join(metadata_dir, file), encoding="utf-8") as text:
                for line in text:
                    field, colon, value = line.partition(":")
                    if not colon or not field or not all("!" <= c <= "~" for c in field):
                        return None  # the end of the headers, or something the email parser reads its own way
                    if field.lower() == "version":
                        value = value.lstrip(" \t").rstrip("\r\n")
                        folded = next(text, "")[:1] in (" ", "\t")
                        return value if value.isascii() and not folded else None
        except FileNotFoundError:
            continue
        except (OSError, UnicodeDecodeError):
            return None
        return None
    return None
