"""What the command line's two ways into `run` and `render` share below the CLI framework: the
CLI (orchestrator.cli) and the launcher's path without it (orchestrator.launch, for `--server`)
carry a command out here, from its options' values, and turn its error into one line and an exit
code here (the table in orchestrator.errors), so both give the same output and codes."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import FnrunError, report_interrupt

if TYPE_CHECKING:
    from .runtimes.container.early import EarlyContainer


def carry_out(command: str, values: Mapping[str, Any], directory: str, arguments: Sequence[str] | None, args: Sequence[str] | None,
              early: EarlyContainer | None = None) -> None:
    """`fnrun run` or `fnrun render` with these values (orchestrator.option_schema's names); `args`:
    the command line after `fnrun`; `early`: the launcher's container for it, handed to the run.
    Raises FnrunError."""
    from . import api
    from .requests.command_line import render_request, run_request

    with _paths_as_typed(directory):
        if command == "run":
            api.run(run_request(values, directory, arguments, args), early=early)
        else:
            api.render(render_request(values, directory, args), early=early)


@contextmanager
def _paths_as_typed(directory: str) -> Iterator[None]:
    """An error naming a package file names it from where the user typed the command."""
    try:
        yield
    except FnrunError as err:
        if str(directory) != "-":
            from .report.paths import as_typed

            # the whole of what went wrong (its context and message), not str(err): the fix stays
            # its own field, said once after it
            err.args, err.context = (as_typed(err.what, Path(directory)),), None
        raise


def exit_code(call: Callable[[], object]) -> int:
    """`call`'s exit code: its own when it returns one, else 0; a FnrunError is one line on stderr
    (and a GitHub annotation in Actions) and its code; an interrupt its line and code."""
    try:
        result = call()
    except FnrunError as err:
        from .report.github import annotate_error

        annotate_error(err)
        print(f"fnrun: error: {err}", file=sys.stderr)
        return err.exit_code
    except KeyboardInterrupt as err:
        return report_interrupt(err)
    except BrokenPipeError:
        return 1
    return result if isinstance(result, int) else 0
