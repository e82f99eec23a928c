"""The one declaration of `fnrun run`'s options (orchestrator.option_schema) against the CLI that
spells them and the launcher that decides its early start by them: a flag added to `run` without
the schema, or a container-shaping flag the launcher would skip, fails here."""

from __future__ import annotations

from typing import Any

import pytest
import typer

from orchestrator.cli import app
from orchestrator.launch import _early_container, _run_flags
from orchestrator.option_schema import BY_NAME, RUN_OPTIONS

BASE = ["run", "pkg", "--image", "example.com/x:v1", "--no-builtin"]
# A value for each option whose value goes into the container and with which the launcher starts
# early: each must change the create request it sends.
CONTAINER_EXAMPLES = {
    "image": ["--image", "example.com/y:v2"],
    "network": ["--network"],
    "as_current_user": ["--as-current-user"],
    "env": ["--env", "A=1"],
    "memory": ["--memory", "1g"],
    "pids_limit": ["--pids-limit", "99"],
    "cpus": ["--cpus", "0.5"],
    "tmpfs_size": ["--tmpfs-size", "32m"],
    "writable_root": ["--writable-root"],
    "keep_capabilities": ["--keep-capabilities"],
    "oci_runtime": ["--runtime", "crun"],
}


def declared_run_options() -> dict[str, Any]:
    """`run`'s options as click builds them from the typer declarations (its help option aside:
    click's own, and unknown to the schema, so the launcher leaves it to the CLI)."""
    command = typer.main.get_command(app).commands["run"]  # type: ignore[attr-defined]
    params = command.get_params(typer.Context(command))
    return {p.name: p for p in params if p.param_type_name == "option" and p.name != "help"}


def test_the_schema_knows_every_option_of_run_as_the_cli_declares_it() -> None:
    declared = declared_run_options()
    assert sorted(declared) == sorted(BY_NAME), "an option of `run` is missing from orchestrator/option_schema.py, or the schema has one run lacks"
    for name, option in declared.items():
        known = BY_NAME[name]
        assert tuple(option.opts + option.secondary_opts) == known.spellings, name
        assert (not (option.is_flag or option.count)) == known.takes_value, name


@pytest.mark.parametrize("option", RUN_OPTIONS, ids=lambda option: option.name)
def test_the_launcher_decides_every_option_by_the_schema(option, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FNRUN_CACHE", "0")
    monkeypatch.delenv("DOCKER_HOST", raising=False)
    for spelling in option.spellings:
        given = [spelling, "x"] if option.takes_value else [spelling]
        flags = _run_flags(["pkg", *given])
        assert (flags is not None) == option.early, spelling
        if flags is not None:
            assert option.spellings[0] in flags, spelling
    assert option.early or _early_container([*BASE, *given]) is None


def test_the_launcher_reads_every_container_shaping_option_it_starts_early_with(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FNRUN_CACHE", "0")
    monkeypatch.delenv("DOCKER_HOST", raising=False)
    shaping = sorted(option.name for option in RUN_OPTIONS if option.container and option.early)
    assert shaping == sorted(CONTAINER_EXAMPLES), "give the new container-shaping option an example value here"
    plain = _early_container(BASE)
    assert plain is not None
    for name, given in CONTAINER_EXAMPLES.items():
        early = _early_container([*BASE, *given])
        assert early is not None and early.body != plain.body, name
