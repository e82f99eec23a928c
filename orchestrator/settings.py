"""fnrun's environment switches, read once where a command starts (the user's strings are parsed
at the edge, as flags are) and handed down in the run's options: nothing below reads them.

`Settings.from_environ` refuses a bad value with one line naming its variable (InputError, exit
2). Every command's edge reads them (a run's in its options; `fnrun source`, `sink`, `lock` and the
rest hand FNRUN_WORKERS down to the readers and writers they call); the library's callers that
pass nothing get a user's who set none. The launcher, which must not import anything heavy, reads
its few variables with `switch` and `cache_dir`. The variables that belong to an option
(FNRUN_RUNTIME, FNRUN_MOUNTS, FNRUN_SERVER, KPT_IMAGE_PREFIX) are the option schema's;
docs/reference/environment.md lists them all."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from .errors import InputError

#: The spellings that turn a switch off (any other non-blank value turns it on).
OFF = ("0", "false", "no", "off")
#: The switches' variables, named once: the option schema's `--no-cache`, `--no-builtin` and
#: `--no-warm` take theirs from here.
CACHE = "FNRUN_CACHE"
BUILTIN = "FNRUN_BUILTIN"
WARM = "FNRUN_WARM"
WORKERS = "FNRUN_WORKERS"
BUILTIN_CATALOG = "FNRUN_BUILTIN_CATALOG"
WARM_HELPER = "FNRUN_WARM_HELPER"
#: The result cache's bound when FNRUN_CACHE_SIZE is not set.
DEFAULT_CACHE_SIZE = 512 * 1024 * 1024


def switch(value: str | None, default: bool) -> bool:
    """A switch's value: unset or blank -> `default`; 0, false, no, off (any case) -> False; else True."""
    if value is None or not value.strip():
        return default
    return value.strip().lower() not in OFF


def at_least_one(text: str | int, where: str) -> int:
    """A whole number of at least 1 (a count of jobs, of processes); else an InputError naming
    `where`, the flag or variable it came from."""
    try:
        number = int(text)
    except ValueError:
        number = 0
    if number < 1:
        raise InputError(f"{where} {text!r}: use a whole number of at least 1")
    return number


def _count(environ: Mapping[str, str], variable: str) -> int | None:
    text = environ.get(variable, "").strip()
    return at_least_one(text, variable) if text else None


def chosen_workers(environ: Mapping[str, str] | None = None) -> int | None:
    """The processes FNRUN_WORKERS asks big jobs to be shared among (None: unset, the cores
    decide), from `environ` or the process's: what the edge of a command that runs no function
    (`fnrun source`, `sink`, `list`, `merge`, `lock`) hands down to the readers and writers."""
    return _count(os.environ if environ is None else environ, WORKERS)


def _size(environ: Mapping[str, str], variable: str, default: int) -> int:
    from .sizes import parse_size

    text = environ.get(variable, "").strip()
    if not text:
        return default
    try:
        return parse_size(text)
    except ValueError:
        raise InputError(f"{variable}={text!r}: use a size such as 512M or 2G") from None


def fnrun_home(environ: Mapping[str, str]) -> Path:
    """$XDG_CACHE_HOME/fnrun, else ~/.cache/fnrun: the user's own files (a warm helper built here)."""
    return Path(environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "fnrun"


def cache_dir(environ: Mapping[str, str]) -> Path:
    """The result cache's directory: $FNRUN_CACHE_DIR, else `fnrun_home` (a cache per CI job or
    test moves only the cache, never the helper a compiler run built)."""
    explicit = environ.get("FNRUN_CACHE_DIR")
    return Path(explicit) if explicit else fnrun_home(environ)


@dataclass(frozen=True)
class HelperPlace:
    """Where the warm-call helper is had (runtimes.container.warm.helper): the binary
    FNRUN_WARM_HELPER names, else the one shipped, else one built under `home` (with zig, or
    with the C compiler CC names)."""

    given: str = ""  # FNRUN_WARM_HELPER as written ("": none named)
    home: Path = field(default_factory=lambda: fnrun_home({}))
    compiler: str = "cc"  # CC


def helper_place(environ: Mapping[str, str]) -> HelperPlace:
    """The HelperPlace `environ` asks for; the launcher's and every run's (Settings.helper)."""
    return HelperPlace(environ.get(WARM_HELPER, "").strip(), fnrun_home(environ), environ.get("CC", "cc"))


def default_cache_dir() -> Path:
    """The cache directory of a user who set no variable (the library's default)."""
    return cache_dir({})


@dataclass(frozen=True)
class Settings:
    """The switches as a run takes them; the defaults are a user's who set none."""

    cache: bool = True  # FNRUN_CACHE: the result cache (as --no-cache when off)
    cache_size: int = DEFAULT_CACHE_SIZE  # FNRUN_CACHE_SIZE: the cache's bound in bytes
    builtin: bool = True  # FNRUN_BUILTIN: fnrun's catalog images in-process where equal (as --no-builtin when off)
    builtin_handover: bool = True  # FNRUN_BUILTIN_HANDOVER: fnrun's builtins take the items as data
    builtin_fork: bool = True  # FNRUN_BUILTIN_FORK: builtins in a child of the fork server, not a new interpreter each
    jobs: int | None = None  # FNRUN_JOBS: work at once when --jobs is not given (None: min(4, CPUs))
    warm: bool = True  # FNRUN_WARM: warm containers (as --no-warm when off)
    workers: int | None = None  # FNRUN_WORKERS: processes a big package is parsed, encoded and written with (None: by the cores)
    builtin_catalog: bool = False  # FNRUN_BUILTIN_CATALOG: kpt's catalog functions in-process (as --builtin-catalog when on)
    cache_dir: Path = field(default_factory=default_cache_dir)  # FNRUN_CACHE_DIR, else XDG_CACHE_HOME's fnrun/
    helper: HelperPlace = HelperPlace()  # FNRUN_WARM_HELPER, XDG_CACHE_HOME, CC: where the warm-call helper is had

    @classmethod
    def from_environ(cls, environ: Mapping[str, str] | None = None) -> Settings:
        """The settings `environ` (the process's environment by default) asks for."""
        env = os.environ if environ is None else environ
        return cls(
            cache=switch(env.get(CACHE), True),
            cache_size=_size(env, "FNRUN_CACHE_SIZE", DEFAULT_CACHE_SIZE),
            builtin=switch(env.get(BUILTIN), True),
            builtin_handover=switch(env.get("FNRUN_BUILTIN_HANDOVER"), True),
            builtin_fork=switch(env.get("FNRUN_BUILTIN_FORK"), True),
            jobs=_count(env, "FNRUN_JOBS"),
            warm=switch(env.get(WARM), True),
            workers=chosen_workers(env),
            builtin_catalog=switch(env.get(BUILTIN_CATALOG), False),
            cache_dir=cache_dir(env),
            helper=helper_place(env),
        )
