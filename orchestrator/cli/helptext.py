"""How `--help` reads: options grouped under their panel (typer's `rich_help_panel`), printed as
plain text so every line can be copied, examples kept line for line (never re-wrapped mid-line),
and the command list with whole descriptions.

Plain text rather than rich's boxes: help is read in logs and pipes as often as in a terminal,
and rich would take `[...]` in option help for markup."""

from __future__ import annotations

from typing import Any

from typer.core import TyperCommand, TyperGroup

try:  # typer vendors click as typer._click (and raises its types) in the versions fnrun supports
    from typer._click import Context, HelpFormatter
except ImportError:  # pragma: no cover - a typer that runs on click itself
    from click import Context, HelpFormatter  # type: ignore[assignment]

#: Panels in the order help shows them; options without one go under "Options" first.
PANELS = ("Functions", "Selection", "Output", "CI", "Sandbox", "Engine and speed")


def _sections(command: Any, ctx: Context) -> list[tuple[str, list[tuple[str, str]]]]:
    arguments: list[tuple[str, str]] = []
    panels: dict[str, list[tuple[str, str]]] = {}
    for param in command.get_params(ctx):
        record = param.get_help_record(ctx)
        if record is None:
            continue
        if param.param_type_name == "argument":
            arguments.append(record)
        else:
            panels.setdefault(getattr(param, "rich_help_panel", None) or "Options", []).append(record)
    order = ["Options", *PANELS, *sorted(set(panels) - {"Options", *PANELS})]
    return [("Arguments", arguments)] * bool(arguments) + [(name, panels[name]) for name in order if name in panels]


def _verbatim_epilog(epilog: str | None, formatter: HelpFormatter) -> None:
    """The epilog's lines as written (indented like the rest), so an example is one line."""
    if not epilog:
        return
    formatter.write_paragraph()
    lines = [line.rstrip() for line in epilog.strip("\n").splitlines()]
    for line in lines:
        formatter.write(f"{' ' * formatter.current_indent}{line}\n" if line else "\n")


class PanelCommand(TyperCommand):
    """A command whose help groups options by panel and prints its examples verbatim."""

    def format_help(self, ctx: Context, formatter: HelpFormatter) -> None:
        self.format_usage(ctx, formatter)
        self.format_help_text(ctx, formatter)
        self.format_options(ctx, formatter)
        self.format_epilog(ctx, formatter)

    def format_options(self, ctx: Context, formatter: HelpFormatter) -> None:
        for title, rows in _sections(self, ctx):
            with formatter.section(title):
                formatter.write_dl(rows)

    def format_epilog(self, ctx: Context, formatter: HelpFormatter) -> None:
        _verbatim_epilog(self.epilog, formatter)


class PanelGroup(TyperGroup):
    """The command list with each command's whole first line, and examples verbatim."""

    def format_help(self, ctx: Context, formatter: HelpFormatter) -> None:
        self.format_usage(ctx, formatter)
        self.format_help_text(ctx, formatter)
        self.format_options(ctx, formatter)  # click's group lists the commands after its options
        self.format_epilog(ctx, formatter)

    def format_commands(self, ctx: Context, formatter: HelpFormatter) -> None:
        rows = []
        for name in self.list_commands(ctx):
            command = self.get_command(ctx, name)
            if command is not None and not command.hidden:
                rows.append((name, command.get_short_help_str(limit=10_000)))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)

    def format_epilog(self, ctx: Context, formatter: HelpFormatter) -> None:
        _verbatim_epilog(self.epilog, formatter)
