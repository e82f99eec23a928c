"""The typer app every command module registers on, and the options that come before a command."""

from __future__ import annotations

import typer

try:  # typer 0.28+ vendors click as typer._click
    from typer.exceptions import Exit
except ImportError:  # pragma: no cover - older typer runs on click itself
    from click.exceptions import Exit  # type: ignore[assignment]

from .. import version
from .helptext import PanelGroup

HELP_OPTIONS = {"help_option_names": ["-h", "--help"]}

app = typer.Typer(
    name="fnrun",
    cls=PanelGroup,
    help="Run sandboxed KRM configuration functions over a package of Kubernetes YAML and write back only what changed.",
    epilog="Examples:\n"
    "  fnrun run samples/nginx                                 # the functions a package declares\n"
    "  fnrun render samples/kpt-package --image-prefix fnrun   # a kpt package's Kptfile pipelines\n"
    "  fnrun run --help                                        # every command has examples",
    no_args_is_help=True,
    add_completion=True,  # --install-completion / --show-completion [bash|zsh|fish|powershell]
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings=HELP_OPTIONS,
)


def _print_version(value: bool) -> None:
    if value:
        print(f"fnrun {version()}")  # the CLI's answer when more follows `--version` (orchestrator.launch answers it alone)
        raise Exit(0)


@app.callback()
def _root(
    show_version: bool = typer.Option(False, "--version", callback=_print_version, is_eager=True, help="Print the version and exit."),
) -> None:
    """Options before the command."""
