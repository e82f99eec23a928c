"""`wrap` and `xargs` in the command list. They run inside function images on every call, so
`orchestrator.entry` sends them to `orchestrator.wrap` before the CLI framework loads; these
entries only list them (and forward, should the CLI be called with them directly)."""

from __future__ import annotations

import typer

from .app import app

_PASS_THROUGH = {"ignore_unknown_options": True, "allow_extra_args": True, "help_option_names": []}


def _forward(command: str, ctx: typer.Context) -> int:
    from ..wrap import main as wrap_main

    return wrap_main([command, *ctx.args])


@app.command(context_settings=_PASS_THROUGH, add_help_option=False)
def wrap(ctx: typer.Context) -> int:
    """Inside a function image: run a shell template (`fnrun wrap -- CMD`) as a KRM function; see `fnrun wrap --help`."""
    return _forward("wrap", ctx)


@app.command(context_settings=_PASS_THROUGH, add_help_option=False)
def xargs(ctx: typer.Context) -> int:
    """Inside a function image: like wrap, and the functionConfig's fields as --key=value flags too."""
    return _forward("xargs", ctx)
