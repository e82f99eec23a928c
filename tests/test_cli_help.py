"""Every command explains itself with an example (`fnrun --help`, each subcommand's --help)."""

from __future__ import annotations

import pytest

from pipeline_helpers import fnrun

COMMANDS = ["", "source", "sink", "run", "list", "merge", "merge3", "explain", "wrap", "xargs"]


@pytest.mark.parametrize("command", COMMANDS)
def test_help_shows_an_example(command: str) -> None:
    result = fnrun(*([command] if command else []), "--help")
    assert result.code == 0, result
    assert "Example" in result.stdout, result.stdout
    assert f"fnrun {command}".strip() in result.stdout


def test_root_help_lists_the_commands() -> None:
    listing = fnrun("--help").stdout
    for command in COMMANDS[1:]:
        assert command in listing, command


def test_version_prints_the_installed_version() -> None:
    from importlib import metadata

    from pipeline_helpers import fnrun

    result = fnrun("--version")
    assert result.code == 0, result
    assert result.stdout == f"fnrun {metadata.version('fnrun')}\n"
    assert "--version" in fnrun("--help").stdout
