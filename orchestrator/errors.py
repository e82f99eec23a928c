"""The exceptions users see; raised deep, turned into one line and an exit code at the CLI edge.

Exit codes a CI step can act on (the README's table):
  1  a function failed or reported an error result (FunctionError)
  2  bad input: command line, package file, function declaration, Kptfile (InputError)
  3  `--check`: the package would change, and nothing failed (DriftError)
  4  the environment: no engine, an image missing or unpullable, a runtime that cannot start a
     container (EnvironmentProblem) — retry or fix the machine, not the package
130/143 interrupted by SIGINT/SIGTERM (Interrupted, or Python's own KeyboardInterrupt)
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

TYPE_CHECKING = False  # typing's constant without typing, which `fnrun --version` never needs; type checkers read it as True
if TYPE_CHECKING:
    from typing import TypeVar

    _Error = TypeVar("_Error", bound="FnrunError")


class FnrunError(Exception):
    """A problem the user can act on. `str(err)` is the whole message: one line, naming the file,
    resource or image at fault. `exit_code` says whose problem it is (see the module's table)."""

    exit_code = EXIT_INPUT
    #: a display already showed it as a GitHub annotation (report.github): the CLI edge need not again
    annotated: bool = False

    def __init__(self, message: str, *, exit_code: int | None = None, context: str | None = None,
                 fix: str | None = None) -> None:
        super().__init__(message)
        if exit_code is not None:
            self.exit_code = exit_code
        self.context = context  # what it is about, said first: the file declaring what failed
        self.fix = fix  # what the user can do, said last

    def __str__(self) -> str:
        return f"{self.what}; {self.fix}" if self.fix else self.what

    @property
    def what(self) -> str:
        """What went wrong, without the fix."""
        text = super().__str__()
        return f"{self.context}: {text}" if self.context else text

    def seen_from(self: _Error, context: str | None, fix: str | None = None) -> _Error:
        """This error as a caller that knows more tells it: about `context` (unless a deeper one
        named what it is about already), with `fix` (unless it carries one). The same error, of
        its own type, so whoever catches it further up decides by type as before."""
        if context and not self.context:
            self.context = context
        if fix and not self.fix:
            self.fix = fix
        return self


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


class Interrupted(KeyboardInterrupt):
    """A stop the fnrun command was asked for (Ctrl-C, SIGTERM), raised by its one signal handler
    (orchestrator.stops); it unwinds like Ctrl-C, so every `finally` removes what it started.
    `written`: it came after the package's write-back committed; `late`: after fnrun had done all
    its work (its first exception was dropped by the interpreter). The CLI must not then claim
    that nothing was written."""

    def __init__(self, signum: int = signal.SIGINT, *, written: bool = False, late: bool = False) -> None:
        super().__init__(f"interrupted by {signal.Signals(signum).name}")
        self.signum = signum
        self.written = written
        self.late = late

    @classmethod
    def of(cls, err: KeyboardInterrupt, *, written: bool = False) -> Interrupted:
        """`err` as an Interrupted (Python's own KeyboardInterrupt is a Ctrl-C), written if either says so."""
        if isinstance(err, Interrupted):
            return cls(err.signum, written=err.written or written, late=err.late)
        return cls(signal.SIGINT, written=written)


def report_interrupt(err: KeyboardInterrupt) -> int:
    """The one line an interrupt ends with, and its exit code: 130 for Ctrl-C, 143 for SIGTERM (the
    shell's 128 + signal). A signal that lands after the write-back committed (while the summary
    prints) must not claim that nothing was written."""
    stop = Interrupted.of(err)
    terminated = stop.signum == signal.SIGTERM
    if stop.late:
        outcome = "it came after fnrun had done its work"
    else:
        outcome = "it came after the package was written" if stop.written else "nothing was written"
    print(f"fnrun: interrupted{' (SIGTERM)' if terminated else ''}; {outcome}", file=sys.stderr)
    return EXIT_SIGTERM if terminated else EXIT_SIGINT
