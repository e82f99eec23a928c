"""The one declaration of `fnrun run`'s and `fnrun render`'s options (orchestrator.option_schema)
against the CLI that spells them and the launcher that decides its early start by them: a flag
added to either command without the schema, or a container-shaping flag the launcher would skip,
fails here."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
import typer

from orchestrator.cli import app
from orchestrator.launch import _early_container
from orchestrator.option_schema import BY_NAME, BY_SPELLING, RENDER_BY_NAME, RENDER_BY_SPELLING, RENDER_OPTIONS, RUN_OPTIONS, Option, read
from testing.sizing import examples

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
        assert option.default is known.default and option.envvar == known.envvar and option.multiple == known.many, name


@pytest.mark.parametrize("option", RUN_OPTIONS, ids=lambda option: option.name)
def test_the_launcher_decides_every_option_by_the_schema(option, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FNRUN_CACHE", "0")
    monkeypatch.delenv("DOCKER_HOST", raising=False)
    for spelling in option.spellings:
        given = [spelling, "x"] if option.takes_value else [spelling]
        parsed = read(["pkg", *given], BY_SPELLING)
        assert parsed is not None and parsed.given == {option.name: ["x" if option.takes_value else ""]}, spelling
    assert option.early or _early_container([*BASE, *given]) is None


def test_the_launcher_reads_every_container_shaping_option_it_starts_early_with(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FNRUN_CACHE", "0")
    monkeypatch.delenv("DOCKER_HOST", raising=False)
    shaping = sorted(option.name for option in RUN_OPTIONS if option.container and option.early)
    assert shaping == sorted(CONTAINER_EXAMPLES), "give the new container-shaping option an example value here"
    plain = _early_container(BASE)
    assert plain is not None
    for name, spelled in CONTAINER_EXAMPLES.items():
        early = _early_container([*BASE, *spelled])
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
        parsed = read([str(root), *given], RENDER_BY_SPELLING)
        assert parsed is not None and option.name in parsed.given and parsed.positionals == [str(root)], spelling
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
    for name, spelled in RENDER_CONTAINER_EXAMPLES.items():
        early = _early_container(["render", str(root), *spelled])
        assert early is not None and early.body != plain.body, name


# ------------------------------------------------------------ the values the launcher reads by it

from hypothesis import given, settings, strategies as st  # noqa: E402

from orchestrator import edge  # noqa: E402
from orchestrator.cli import run_app  # noqa: E402
from orchestrator.direct import _arguments, command_line  # noqa: E402

TEXT = st.text(st.sampled_from("ab-=.:/ 1"), max_size=6)
NUMBER = st.one_of(st.integers(-5, 999).map(str), st.floats(allow_nan=False, allow_infinity=False).map(repr), TEXT)


def given_option(option: Option) -> st.SearchStrategy[list[str]]:
    """One option as a user may write it: any spelling, `--long=value` or a separate value."""
    spelling = st.sampled_from(option.spellings)
    if not option.takes_value:
        return spelling.map(lambda s: [s])
    value = NUMBER if option.kind in (int, float) else TEXT
    return st.tuples(spelling, value, st.booleans()).map(lambda t: [f"{t[0]}={t[1]}"] if t[2] and t[0].startswith("--") else [t[0], t[1]])


@st.composite
def command_lines(draw: st.DrawFn) -> list[str]:
    command = draw(st.sampled_from(["run", "render"]))
    options = RUN_OPTIONS if command == "run" else RENDER_OPTIONS
    words = [word for option in draw(st.lists(st.sampled_from(options), max_size=6)) for word in draw(given_option(option))]
    positionals = draw(st.lists(st.sampled_from(["pkg", "-", "k=v"]), max_size=2 if command == "run" else 1))
    rest = draw(st.one_of(st.none(), st.lists(st.sampled_from(["k=v", "--image", "-q"]), max_size=2)))
    cut = draw(st.integers(0, len(words)))
    return [command, *words[:cut], *positionals, *words[cut:], *([] if rest is None else ["--", *rest])]


@settings(max_examples=examples(200), deadline=None)
@given(command_lines(), st.sampled_from([{}, {"FNRUN_SERVER": "unix:/s", "FNRUN_MOUNTS": "bind", "FNRUN_RUNTIME": "crun"}]))
def test_the_launcher_reads_the_values_the_cli_hands_its_command(args: list[str], environ: dict[str, str]) -> None:
    """Whatever the launcher reads by the schema is what typer hands `run`/`render`: the same
    values, directory, function arguments and command line (the one request builder gets the same)."""
    seen: list[tuple] = []
    with pytest.MonkeyPatch.context() as patch:
        for name in ("FNRUN_SERVER", "FNRUN_MOUNTS", "FNRUN_RUNTIME"):
            patch.delenv(name, raising=False)
        for name, value in environ.items():
            patch.setenv(name, value)
        patch.setattr(edge, "carry_out", lambda *call: seen.append(call))
        read_here = command_line(args, os.environ)
        code = run_app(args)
    arguments = None if read_here is None else _arguments(args[0], read_here[0])
    if read_here is None or arguments is None:
        return  # the CLI's to read (and maybe refuse)
    values = read_here[1]
    assert code == 0 and len(seen) == 1, (args, code)
    command, cli_values, directory, function_args, whole, early = seen[0]
    assert early is None  # no launcher started a container for this command line
    assert (command, directory, list(function_args or ()), whole) == (args[0], *arguments, args)
    assert {name: list(v) if isinstance(v, tuple) else v for name, v in cli_values.items()} == values
