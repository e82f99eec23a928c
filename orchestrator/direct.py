"""The launcher's own way through the commands people run most, without the CLI framework: typer
and click take longer to import and build than a small command's whole work. `run` and `render`
when the option schema reads the whole command line (the same values into the same request
builder and the same error edge as the CLI: orchestrator.edge; with `--server ADDR` that is the
whole edit loop, every call going to the function runner), `source [DIR]` and `sink DIR` with no
option, and kpt's spellings (`fnrun eval`), answered with their hint. Anything else (--help, an
unknown flag, a value the CLI refuses, another command, the shell asking for completions) is the
CLI's; `tests/test_start_imports.py` holds both ways to the same output.

The launcher (orchestrator.launch) loads it inside `main`, after `fnrun --version` was answered,
and hands it the environment: it reads none of its own. Light to import: the schema and the edge
load when a command line is read."""

from __future__ import annotations

from orchestrator import COMPLETE_VAR

TYPE_CHECKING = False  # typing's constant without typing, as in orchestrator.launch; type checkers read it as True
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from orchestrator.option_schema import CommandLine
    from orchestrator.runtimes.container.early import EarlyContainer


def carried_out(args: list[str], environ: Mapping[str, str], early: EarlyContainer | None) -> int | None:
    """The exit code of the command line carried out here; None leaves it to the CLI. The same
    values go to the same code as from the CLI's commands (orchestrator.edge: the request, the
    error line, the exit code); `early`: the launcher's container, handed to the run."""
    from orchestrator import edge

    if COMPLETE_VAR in environ:
        return None
    if (hint := edge.kpt_hint(args)) is not None:
        return hint
    if args[:1] in (["source"], ["sink"]):
        directory = _package_directory(args)
        if directory is None:
            return None
        from pathlib import Path

        tool = edge.source if args[0] == "source" else edge.sink
        return edge.exit_code(lambda: tool(Path(directory)))
    command = command_line(args, environ)
    if command is None:
        return None
    line, given = command
    arguments = _arguments(args[0], line)
    if arguments is None:
        return None
    return edge.exit_code(lambda: edge.carry_out(args[0], given, arguments[0], arguments[1], args, early))


def command_line(args: list[str], environ: Mapping[str, str]) -> tuple[CommandLine, dict[str, Any]] | None:
    """`run`'s or `render`'s command line read by the schema, and every option's value as the CLI
    would hand it over (its environment variables read from `environ`); None for another command,
    or anything the schema cannot read as the CLI would (an unknown flag, a value the CLI would
    refuse: the CLI says so). The launcher's early start reads the command line by it too."""
    if args[:1] not in (["run"], ["render"]):
        return None
    from orchestrator.option_schema import BY_SPELLING, RENDER_BY_SPELLING, RENDER_OPTIONS, RUN_OPTIONS, read, values

    render = args[0] == "render"
    line = read(args[1:], RENDER_BY_SPELLING if render else BY_SPELLING)
    if line is None:
        return None
    try:
        return line, values(line, RENDER_OPTIONS if render else RUN_OPTIONS, environ)
    except ValueError:
        return None


def _package_directory(args: list[str]) -> str | None:
    """DIR of `source [DIR]` or `sink DIR` as the CLI reads it (`source`'s default is the current
    directory, `sink` has none); None for anything else, the CLI's to read (an option, `-`, `--`,
    a word too many or too few)."""
    words = args[1:]
    if any(word.startswith("-") for word in words) or len(words) > 1 or (args[0] == "sink" and not words):
        return None
    return words[0] if words else "."


def _arguments(command: str, line: CommandLine) -> tuple[str, list[str]] | None:
    """DIR and the function's key=value arguments as the CLI reads them (cli.runs
    DefaultDirectoryCommand: `run -- k=v` runs on "."); None where the CLI refuses them."""
    words = [*(line.positionals or ["."] * (line.rest is not None)), *(line.rest or ())]
    if command == "render" and len(words) > 1:  # no function arguments: the CLI refuses the extra argument
        return None
    return (words[0] if words else "."), words[1:]
