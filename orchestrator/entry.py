"""The CLI behind the launcher (orchestrator.launch, the `fnrun` entry point; function images call
`main` here directly). `fnrun wrap` and `fnrun xargs` run inside function images on every call, so
they skip the CLI framework; everything else goes through the typer app in `cli`."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .runtimes.container.early import EarlyContainer

LIGHT_COMMANDS = ("wrap", "xargs")


def main(argv: list[str] | None = None, early: EarlyContainer | None = None) -> None:
    """`early`: the container the launcher started for this command line, for its run to adopt."""
    args = sys.argv[1:] if argv is None else argv
    if args and args[0] in LIGHT_COMMANDS:
        from .wrap import main as wrap_main

        sys.exit(wrap_main(args))
    from .cli import run_app

    sys.exit(run_app(args, early))
