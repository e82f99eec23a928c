"""The command line: a thin typer shell over `orchestrator.api`. Options become arguments of
library calls; no YAML or Docker here. Errors are turned into one line and an exit code once, in
`run_app`."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import click
import typer

from .errors import FnrunError

app = typer.Typer(
    name="fnrun",
    help="Run sandboxed KRM configuration functions over a package of Kubernetes YAML and write back only what changed.\n\n"
    "Example:  fnrun run samples/nginx",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


@app.command(epilog="Example:  fnrun source samples/nginx > package.yaml")
def source(directory: Path = typer.Argument(..., help="Package directory to read.")) -> None:
    """Print a package as a ResourceList (with path/index annotations and comments) on stdout."""
    from . import api

    sys.stdout.write(api.source(directory))


@app.command(epilog="Example:  fnrun source pkg | fnrun sink out/")
def sink(directory: Path = typer.Argument(..., help="Package directory to write (created when missing).")) -> None:
    """Write a ResourceList, List or YAML stream from stdin into a package directory.

    Unchanged files keep their bytes; resource files missing from the input are deleted."""
    from . import api

    plan = api.sink(directory, api.read_stdin())
    print(f"fnrun sink: {plan.summary()}", file=sys.stderr)


def run_app(args: list[str]) -> int:
    """Run the CLI; the one place where errors become an exit code and a single line on stderr."""
    command = typer.main.get_command(app)
    try:
        result = command.main(args=args, prog_name="fnrun", standalone_mode=False)
    except FnrunError as err:
        print(f"fnrun: error: {err}", file=sys.stderr)
        return err.exit_code
    except click.exceptions.Exit as err:
        return err.exit_code
    except click.exceptions.Abort:
        print("fnrun: aborted", file=sys.stderr)
        return 130
    except click.ClickException as err:
        err.show()
        return 2
    except KeyboardInterrupt:
        print("fnrun: interrupted; nothing was written", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 1
    return result if isinstance(result, int) else 0
