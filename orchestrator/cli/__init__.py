"""The command line: a thin typer shell over `orchestrator.api`. Options become arguments of
library calls; no YAML or Docker here. Errors and interrupts become one line and an exit code
once, in `run_app` (the table in orchestrator.errors).

The commands live in modules by what they do (`runs`: run and render; `package`: the package
tools; `engine`: cache and doctor); each registers itself on `app` when imported below. Another
module adds its commands the same way: define them on `app` (cli/app.py) and import it here."""

from __future__ import annotations

import sys

import typer

try:  # typer 0.28+ vendors click as typer._click and raises its exceptions, even with click installed
    from typer._click.exceptions import ClickException
    from typer.exceptions import Abort, Exit
except ImportError:  # pragma: no cover - older typer runs on click itself
    from click.exceptions import Abort, ClickException, Exit  # type: ignore[assignment]

from ..errors import EXIT_INPUT, EXIT_SIGINT, FnrunError, report_interrupt
from .app import app

from . import runs, package, engine, shell  # noqa: F401 - each registers its commands on `app`
from . import imagebuild  # noqa: F401 - `fnrun images build`, on the images group
from .images import register as _register_image_commands

_register_image_commands(app)


def run_app(args: list[str]) -> int:
    """Run the CLI; the one place where errors become an exit code and a single line on stderr.

    The command is invoked directly (not through typer's `main`), because typer's main turns
    Ctrl-C into a silent exit 130 and SIGTERM into the same: a CI log must say it was
    interrupted, by which signal, and that nothing was written."""
    command = typer.main.get_command(app)
    try:
        with command.make_context("fnrun", list(args), obj={"args": list(args)}) as ctx:
            result = command.invoke(ctx)
    except FnrunError as err:
        from ..report.github import annotate_error

        annotate_error(err)
        print(f"fnrun: error: {err}", file=sys.stderr)
        return err.exit_code
    except Exit as err:
        return err.exit_code
    except Abort:
        print("fnrun: aborted", file=sys.stderr)
        return EXIT_SIGINT
    except ClickException as err:
        err.show()
        return EXIT_INPUT
    except KeyboardInterrupt as err:
        return report_interrupt(err)
    except BrokenPipeError:
        return 1
    return result if isinstance(result, int) else 0
