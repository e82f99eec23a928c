"""MkDocs hook: the command reference is generated from fnrun's own CLI when the site is built.

A page holding the marker `<!-- fnrun-cli-reference -->` gets, in its place, every command and
subcommand of the typer app (as click sees it) with its usage, help, options and examples, so the
reference cannot drift from what `fnrun --help` says."""

from __future__ import annotations

from typing import Any

MARKER = "<!-- fnrun-cli-reference -->"


def on_page_markdown(markdown: str, page: Any, **_: Any) -> str:
    if MARKER not in markdown:
        return markdown
    return markdown.replace(MARKER, reference())


def reference() -> str:
    """Markdown for every visible command, depth first, in the order `fnrun --help` lists them."""
    import typer.main

    from orchestrator.cli import app

    root = typer.main.get_command(app)
    usage = ["## `fnrun`", "", _escape((root.help or "").strip()), "", "```text", "fnrun [OPTIONS] COMMAND [ARGS]...", "```", ""]
    parts: list[str] = ["\n".join(usage), _options_table(root, [])]
    for name, command in _commands(root):
        parts.append(_command(["fnrun", name], command))
    return "\n".join(parts)


def _commands(group: Any) -> list[tuple[str, Any]]:
    commands = getattr(group, "commands", {})
    return [(name, cmd) for name, cmd in commands.items() if not getattr(cmd, "hidden", False)]


def _command(path: list[str], command: Any) -> str:
    depth = min(len(path), 4)
    lines = [f"{'#' * depth} `{' '.join(path)}`", ""]
    help_text = (command.help or "").strip()
    if help_text:
        lines += [_escape(help_text), ""]
    arguments = [p for p in command.params if p.param_type_name == "argument"]
    usage = " ".join([*path, *("[OPTIONS]" for _ in [0] if _visible_options(command)), *(_argument_usage(a) for a in arguments)])
    if getattr(command, "commands", None):
        usage += " COMMAND [ARGS]..."
    lines += ["```text", usage, "```", ""]
    if arguments:
        lines += ["| argument | meaning |", "| --- | --- |"]
        lines += [f"| `{a.name.upper()}` | {_cell(getattr(a, 'help', '') or '')} |" for a in arguments]
        lines.append("")
    table = _options_table(command, path)
    if table:
        lines.append(table)
    epilog = (command.epilog or "").strip()
    if epilog:
        lines += ["```text", epilog, "```", ""]
    for name, sub in _commands(command):
        lines.append(_command([*path, name], sub))
    return "\n".join(lines)


def _argument_usage(argument: Any) -> str:
    name = argument.name.upper()
    if argument.nargs != 1:
        name += "..."
    return name if argument.required else f"[{name}]"


def _visible_options(command: Any) -> list[Any]:
    return [p for p in command.params if p.param_type_name == "option" and not getattr(p, "hidden", False)]


def _options_table(command: Any, path: list[str]) -> str:
    """Options grouped by their help panel, as `--help` groups them."""
    options = _visible_options(command)
    if not path:
        options = [p for p in options if "--version" in p.opts]
    if not options:
        return ""
    panels: dict[str, list[Any]] = {}
    for option in options:
        panels.setdefault(getattr(option, "rich_help_panel", None) or "Options", []).append(option)
    lines: list[str] = []
    for panel, members in panels.items():
        lines += [f"**{panel}**", "", "| option | meaning |", "| --- | --- |"]
        for option in members:
            names = ", ".join(f"`{name}`" for name in [*option.opts, *option.secondary_opts])
            envvar = getattr(option, "envvar", None)
            extra = f" Environment: `{envvar}`." if isinstance(envvar, str) else ""
            lines.append(f"| {names} | {_cell(option.help or '')}{extra} |")
        lines.append("")
    return "\n".join(lines)


def _cell(text: str) -> str:
    return _escape(" ".join(text.split())).replace("|", "\\|")


def _escape(text: str) -> str:
    """Help text is plain text: keep `<` from opening HTML."""
    return text.replace("<", "&lt;")
