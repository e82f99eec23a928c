"""The exceptions users see; raised deep, turned into one line and an exit code at the CLI edge.

Exit codes a CI step can act on (the README's table):
  1  a function failed or reported an error result (FunctionError)
  2  bad input: command line, package file, function declaration, Kptfile (InputError)
  3  `--check`: the package would change, and nothing failed (DriftError)
  4  the environment: no engine, an image missing or unpullable, a runtime that cannot start a
     container (EnvironmentProblem) — retry or fix the machine, not the package
130/143 interrupted by SIGINT/SIGTERM (set by the CLI edge, not by an exception here)
"""

from __future__ import annotations

import signal
import sys

EXIT_FUNCTION = 1
EXIT_INPUT = 2
EXIT_DRIFT = 3
EXIT_ENVIRONMENT = 4
EXIT_SIGINT = 130
EXIT_SIGTERM = 143


class FnrunError(Exception):
    """A problem the user can act on. `str(err)` is the whole message: one line, naming the file,
    resource or image at fault. `exit_code` says whose problem it is (see the module's table)."""

    exit_code = EXIT_INPUT

    def __init__(self, message: str, *, exit_code: int | None = None) -> None:
        super().__init__(message)
        if exit_code is not None:
            self.exit_code = exit_code


class InputError(FnrunError):
    """The command line, the package or a function declaration is wrong (exit 2)."""

    exit_code = EXIT_INPUT


class FunctionError(FnrunError):
    """A function failed, returned garbage, or reported an error result (exit 1)."""

    exit_code = EXIT_FUNCTION


class DriftError(FnrunError):
    """`--check` found files that are not what the functions render (exit 3): the package is
    out of date, which is not the same as a function failing."""

    exit_code = EXIT_DRIFT


class EnvironmentProblem(FnrunError):
    """The machine, not the package: no container engine, an image missing or unpullable (a
    registry or DNS failure too), an OCI runtime that cannot start a container (exit 4)."""

    exit_code = EXIT_ENVIRONMENT


class ImageUnavailable(EnvironmentProblem):
    """A function's image is not here and could not be had: absent under the `never` pull policy,
    or its pull failed (exit 4). fnrun may have a builtin to offer in its place."""


def report_interrupt(err: BaseException) -> int:
    """The one line an interrupt ends with, and its exit code: 130 for Ctrl-C, 143 for SIGTERM (the
    shell's 128 + signal). A signal that lands after the write-back committed (while the summary
    prints) must not claim that nothing was written."""
    terminated = getattr(err, "signum", None) == signal.SIGTERM
    if getattr(err, "late", False):
        outcome = "it came after fnrun had done its work"
    else:
        outcome = "it came after the package was written" if getattr(err, "written", False) else "nothing was written"
    print(f"fnrun: interrupted{' (SIGTERM)' if terminated else ''}; {outcome}", file=sys.stderr)
    return EXIT_SIGTERM if terminated else EXIT_SIGINT
