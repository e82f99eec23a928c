"""The one declaration of `fnrun run`'s and `fnrun render`'s options (orchestrator.option_schema)
against the CLI that spells them and the launcher that decides its early start by them: a flag
added to either command without the schema, or a container-shaping flag the launcher would skip,
fails here."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import typer

from orchestrator.cli import app
from orchestrator.launch import _command_line, _early_container
from orchestrator.option_schema import BY_NAME, BY_SPELLING, RENDER_BY_NAME, RENDER_BY_SPELLING, RENDER_OPTIONS, RUN_OPTIONS, Option

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


# render's: its first container step is the root Kptfile's, whose short name the prefix completes
RENDER_CONTAINER_EXAMPLES = {
    **{name: given for name, given in CONTAINER_EXAMPLES.items() if name not in ("image", "network")},
    "image_prefix": ["--image-prefix", "example.com/other"],
}


def declared_options(command_name: str) -> dict[str, Any]:
    """A command's options as click builds them from the typer declarations (its help option
    aside: click's own, and unknown to the schema, so the launcher leaves it to the CLI)."""
    command = typer.main.get_command(app).commands[command_name]  # type: ignore[attr-defined]
    params = command.get_params(typer.Context(command))
    return {p.name: p for p in params if p.param_type_name == "option" and p.name != "help"}


@pytest.mark.parametrize("command, schema", [("run", BY_NAME), ("render", RENDER_BY_NAME)])
def test_the_schema_knows_every_option_as_the_cli_declares_it(command: str, schema: dict[str, Option]) -> None:
    declared = declared_options(command)
    assert sorted(declared) == sorted(schema), f"an option of `{command}` is missing from orchestrator/option_schema.py, or the schema has one {command} lacks"
    for name, option in declared.items():
        known = schema[name]
        assert tuple(option.opts + option.secondary_opts) == known.spellings, name
        assert (not (option.is_flag or option.count)) == known.takes_value, name


@pytest.mark.parametrize("option", RUN_OPTIONS, ids=lambda option: option.name)
def test_the_launcher_decides_every_option_by_the_schema(option, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FNRUN_CACHE", "0")
    monkeypatch.delenv("DOCKER_HOST", raising=False)
    for spelling in option.spellings:
        given = [spelling, "x"] if option.takes_value else [spelling]
        parsed = _command_line(["pkg", *given], BY_SPELLING)
        assert (parsed is not None) == option.early, spelling
        if parsed is not None:
            assert option.spellings[0] in parsed[0], spelling
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


def render_package(root: Path) -> Path:
    """A package whose root Kptfile runs one container step, named by a short name."""
    root.mkdir()
    (root / "Kptfile").write_text("apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: p\npipeline:\n  mutators:\n  - image: x:v1\n")
    return root


@pytest.mark.parametrize("option", RENDER_OPTIONS, ids=lambda option: option.name)
def test_the_launcher_decides_every_render_option_by_the_schema(option: Option, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FNRUN_CACHE", "0")
    monkeypatch.delenv("DOCKER_HOST", raising=False)
    root = render_package(tmp_path / "pkg")
    for spelling in option.spellings:
        given = [spelling, "x"] if option.takes_value else [spelling]
        parsed = _command_line([str(root), *given], RENDER_BY_SPELLING)
        assert (parsed is not None) == option.early, spelling
        if parsed is not None:
            assert option.spellings[0] in parsed[0] and parsed[1] == [str(root)], spelling
    assert option.early or _early_container(["render", str(root), *given]) is None


def test_the_launcher_reads_every_container_shaping_render_option(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FNRUN_CACHE", "0")
    for name in ("DOCKER_HOST", "KPT_IMAGE_PREFIX", "FNRUN_MOUNTS", "FNRUN_RUNTIME"):
        monkeypatch.delenv(name, raising=False)
    root = render_package(tmp_path / "pkg")
    shaping = sorted(option.name for option in RENDER_OPTIONS if option.container and option.early)
    assert shaping == sorted(RENDER_CONTAINER_EXAMPLES), "give the new container-shaping option of render an example value here"
    plain = _early_container(["render", str(root)])
    assert plain is not None and plain.body["Image"] == "ghcr.io/kptdev/krm-functions-catalog/x:v1"
    for name, given in RENDER_CONTAINER_EXAMPLES.items():
        early = _early_container(["render", str(root), *given])
        assert early is not None and early.body != plain.body, name
