"""Every command explains itself with an example (`fnrun --help`, each subcommand's --help)."""

from __future__ import annotations

import pytest

from testing.in_process import fnrun_here

COMMANDS = ["", "source", "sink", "run", "list", "merge", "merge3", "explain", "wrap", "xargs"]


@pytest.mark.parametrize("command", COMMANDS)
def test_help_shows_an_example(command: str) -> None:
    result = fnrun_here(*([command] if command else []), "--help")
    assert result.code == 0, result
    assert "Example" in result.stdout, result.stdout
    assert f"fnrun {command}".strip() in result.stdout


def test_root_help_lists_the_commands() -> None:
    listing = fnrun_here("--help").stdout
    for command in COMMANDS[1:]:
        assert command in listing, command


def test_version_prints_the_installed_version() -> None:
    from importlib import metadata


    result = fnrun_here("--version")
    assert result.code == 0, result
    assert result.stdout == f"fnrun {metadata.version('fnrun')}\n"
    assert "--version" in fnrun_here("--help").stdout


def test_the_command_list_gives_whole_descriptions_and_the_shell_template_commands() -> None:
    listing = fnrun_here("--help", env={"COLUMNS": "80"}).stdout
    commands = listing.split("Commands:", 1)[1]
    assert "..." not in commands
    assert "wrap " in commands and "xargs " in commands
    assert "pipeline (subpackages first), written back only where changed." in " ".join(commands.split())


@pytest.mark.parametrize("command", ["run", "render"])
def test_options_are_grouped_in_panels_and_examples_stay_one_line_each(command: str) -> None:
    text = fnrun_here(command, "-h", env={"COLUMNS": "80"}).stdout
    for panel in ("Functions:", "Selection:" if command == "run" else "Output:", "Output:", "CI:", "Sandbox:", "Engine and speed:"):
        assert f"\n{panel}\n" in text, panel
    assert len(text.splitlines()) < 130
    examples = text.split("Examples:\n", 1)[1].splitlines()
    assert examples and all(line.startswith(("  fnrun ", "  cd ")) for line in examples if line.strip()), examples
