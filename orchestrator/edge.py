"""What the command line's two ways into a command share below the CLI framework: the CLI
(orchestrator.cli) and the launcher's path without it (orchestrator.direct: `run` and `render`
whose command line the option schema reads, `source`, `sink`, kpt's spellings) carry a command
out here, from its options' values, and turn its error into one line and an exit code here (the
table in orchestrator.errors), so both give the same output and codes. Light to import: the
launcher loads it before the library."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from .errors import EXIT_INPUT, FnrunError, report_interrupt

if TYPE_CHECKING:
    from pathlib import Path

    from .runtimes.container.early import EarlyContainer

#: kpt's command words and fnrun's commands for them (`kpt fn eval` is `fnrun run`).
KPT_COMMANDS = {"eval": "run", "render": "render", "source": "source", "sink": "sink"}


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


def source(directory: Path | str, fn_config: Path | None = None) -> None:
    """`fnrun source`: the package as a ResourceList on stdout, written while it is read."""
    from . import api
    from .settings import chosen_workers

    api.write_source(directory, sys.stdout, fn_config, chosen_workers())


def sink(directory: Path | str) -> None:
    """`fnrun sink`: a ResourceList, List or YAML stream from stdin into the package; what it
    changed, on stderr."""
    from . import api
    from .settings import chosen_workers

    plan = api.sink(directory, sys.stdin.buffer, workers=chosen_workers())
    print(f"fnrun sink: {plan.summary()}", file=sys.stderr)


def kpt_spelling(args: list[str]) -> str | None:
    """What to type instead, when the command line is kpt's (`fnrun eval`, `fnrun fn render`).
    A hint, not an alias: `fnrun run` without --image runs the package's declared functions,
    where kpt's eval refuses, so the user should learn the name that says what will happen."""
    words = args[1:] if args[:1] == ["fn"] else args
    if not words or (words is args and words[0] != "eval"):
        return None
    own = KPT_COMMANDS.get(words[0])
    if own is None:
        return None
    import shlex

    instead = shlex.join(["fnrun", own, *words[1:]])
    return f"no command {' '.join(args[: len(args) - len(words) + 1])!r}: kpt's `fn {words[0]}` is `fnrun {own}` here, with kpt's flags: {instead}"


def kpt_hint(args: list[str]) -> int | None:
    """`kpt_spelling`'s hint as the one error line, and its exit code; None when the command line
    is not kpt's."""
    hint = kpt_spelling(args)
    if hint is None:
        return None
    print(f"fnrun: error: {hint}", file=sys.stderr)
    return EXIT_INPUT


@contextmanager
def _paths_as_typed(directory: str) -> Iterator[None]:
    """An error naming a package file names it from where the user typed the command."""
    try:
        yield
    except FnrunError as err:
        if str(directory) != "-":
            from pathlib import Path

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
