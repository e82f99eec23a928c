"""The one exception type users see; raised deep, turned into one line and an exit code at the CLI edge."""

from __future__ import annotations


class FnrunError(Exception):
    """A problem the user can act on. `str(err)` is the whole message: one line, naming the file,
    resource or image at fault. `exit_code` is 2 for bad user input, 1 for a failed function."""

    exit_code = 2

    def __init__(self, message: str, *, exit_code: int | None = None) -> None:
        super().__init__(message)
        if exit_code is not None:
            self.exit_code = exit_code


class InputError(FnrunError):
    """The command line, the package or a function declaration is wrong (exit 2)."""

    exit_code = 2


class FunctionError(FnrunError):
    """A function failed, returned garbage, or reported an error result (exit 1)."""

    exit_code = 1
