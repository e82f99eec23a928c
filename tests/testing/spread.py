"""How many processes the fast subset (`pytest -m "not engine"`) runs its tests in: it is CPU-bound
(YAML rendered and compared, property tests, fnrun started and forked), and a developer waits for
it, so it spreads over the machine's cores (pytest-xdist); a focused run (a file or a test named
on the command line), a run with `-n` of its own and every other run stay in one process.

The project's pytest settings opt in (`fast_subset_workers` in pyproject.toml: "auto" is one
process per core, a number that many, "0" none); an inner pytest a test starts in a directory of
its own does not inherit it. tests/conftest.py hands xdist the answer before xdist reads `-n`."""

from __future__ import annotations

import os
from pathlib import Path

#: The pytest setting that opts a project's suite in.
SETTING = "fast_subset_workers"


def workers(setting: str, fast_subset: bool, given: object, args: list[str], cores: int) -> int | str | None:
    """xdist's `-n` for this run, or None to leave the run as it is. `given` is the `-n` the
    command line gave (None when it gave none), `args` what it named to run."""
    if not fast_subset or given is not None or not setting or setting == "0":
        return None
    if any(not Path(arg.split("::")[0]).is_dir() for arg in args):
        return None  # a file or a test named: a focused run, where starting workers costs more than it saves
    if setting == "auto":
        return "auto" if cores > 1 else None
    if not setting.isdigit():
        raise ValueError(f"{SETTING} is {setting!r}: give auto or a number of processes")
    return int(setting) if int(setting) > 1 else None


def cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1
