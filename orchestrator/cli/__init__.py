"""The command line: a thin typer shell over `orchestrator.api`. Options become arguments of
library calls; no YAML or Docker here. Errors and interrupts become one line and an exit code
once, in `run_app`, through orchestrator.edge (the table in orchestrator.errors), which the
launcher's path without the CLI framework shares.

The commands live in modules by what they do (`runs`: run and render; `package`: the package
tools; `engine`: cache and doctor); each registers itself on `app` when imported below. Another
module adds its commands the same way: define them on `app` (cli/app.py) and import it here."""

from __future__ import annotations

import copy
import os
import sys
from typing import TYPE_CHECKING, Any

import typer

try:  # typer 0.28+ vendors click as typer._click and raises its exceptions, even with click installed
    from typer._click.exceptions import ClickException
    from typer.exceptions import Abort, Exit
except ImportError:  # pragma: no cover - older typer runs on click itself
    from click.exceptions import Abort, ClickException, Exit  # type: ignore[assignment]

from .. import COMPLETE_VAR
from ..edge import exit_code, kpt_hint
from ..errors import EXIT_INPUT, EXIT_SIGINT
from . import (  # noqa: F401 - each registers its commands on `app`
    casetest,
    engine,
    imagebuild,
    package,
    runs,
    serve,
    shell,
)
from .app import app
from .images import register as _register_image_commands

if TYPE_CHECKING:
    from ..runtimes.container.early import EarlyContainer

_register_image_commands(app)


def run_app(args: list[str], early: EarlyContainer | None = None) -> int:
    """Run the CLI; the one place where errors become an exit code and a single line on stderr.

    The command is invoked directly (not through typer's `main`), because typer's main turns
    Ctrl-C into a silent exit 130 and SIGTERM into the same: a CI log must say it was
    interrupted, by which signal, and that nothing was written. `early`: the launcher's container
    for this command line, handed to `run` or `render` through the context."""
    if COMPLETE_VAR in os.environ:  # the shell asks for completions (the script --show-completion prints)
        typer.main.get_command(app)._main_shell_completion({}, "fnrun", COMPLETE_VAR)  # exits
    hint = kpt_hint(args)
    if hint is not None:
        return hint
    command = typer.main.get_command(app_for(args))
    return exit_code(lambda: _invoke(command, args, early))


def app_for(args: list[str]) -> typer.Typer:
    """The app to build for this command line: for `fnrun COMMAND ...`, one with COMMAND alone.
    Typer turns every command's parameters into click's when it builds the app (~30 ms, most of
    it `run`'s and `render`'s options), and a command line runs one; what it shows (the usage
    line, help, an error) names only its own command and `fnrun`. The whole app for anything
    else: the command list (`fnrun --help`), options before the command, a word that names no
    command (its error suggests the others), a group (`fnrun cache ...`)."""
    own = {info.name or typer.main.get_command_name(info.callback.__name__): info for info in app.registered_commands if info.callback}
    chosen = own.get(args[0]) if args else None
    if chosen is None:
        return app
    single = copy.copy(app)
    single.registered_commands, single.registered_groups = [chosen], []
    return single


def _invoke(command: Any, args: list[str], early: EarlyContainer | None = None) -> object:
    """The command's result, or the exit code of what only the CLI framework raises (the errors
    everything else raises are orchestrator.edge's to report)."""
    try:
        with command.make_context("fnrun", list(args), obj={"args": list(args), "early": early}) as ctx:
            return command.invoke(ctx)
    except Exit as err:
        return err.exit_code
    except Abort:
        print("fnrun: aborted", file=sys.stderr)
        return EXIT_SIGINT
    except ClickException as err:
        err.show()
        return EXIT_INPUT
