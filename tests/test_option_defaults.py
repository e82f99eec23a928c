"""Every option's default has one definition, orchestrator.option_schema's: the typer declarations,
the request groups, the runtimes' `Sandbox` and the launcher take it from there, and no module that
declares, carries or reads an option writes the value again (a second `300.0` would drift)."""

from __future__ import annotations

import ast
from dataclasses import fields
from pathlib import Path
from typing import Any

import pytest

from orchestrator.option_schema import EXPLAIN_OPTIONS, RENDER_OPTIONS, RUN_OPTIONS, SERVE_OPTIONS, Option, default
from orchestrator.requests import SandboxSettings
from orchestrator.requests.groups import Functions
from orchestrator.runtimes.protocol import Invocation, Sandbox
from orchestrator.sizes import parse_memory, parse_size

PACKAGE = Path(__file__).resolve().parent.parent / "orchestrator"
# Where options are declared, carried into a request, parsed or read ahead by the launcher.
MODULES = (
    "cli/options.py", "cli/runs.py", "cli/package.py", "cli/serve.py", "cli/engine.py", "cli/casetest.py",
    "requests/groups.py", "requests/command_line.py", "requests/parse.py", "runtimes/protocol.py", "launch.py", "direct.py", "edge.py",
    "serve/command.py",
)
EVERY = {option.name: option for options in (RUN_OPTIONS, RENDER_OPTIONS, SERVE_OPTIONS, EXPLAIN_OPTIONS) for option in options}
# Defaults a literal can be told apart by: a switch's False, None and 1 are everywhere for other reasons.
VALUED = {name: option.default for name, option in EVERY.items() if option.default is not None and not isinstance(option.default, bool)}


def same_value(literal: Any, value: Any) -> bool:
    """A literal that writes the default again: the same value and type (an int for a float default
    counts too, but for 0 and 1, which mean other things)."""
    if isinstance(literal, bool) or literal is None:
        return False
    if type(literal) is type(value):
        return literal == value
    return isinstance(literal, int) and isinstance(value, float) and literal not in (0, 1) and literal == value


def second_definitions(source: str, defaults: dict[str, Any]) -> list[str]:
    """Where `source` writes one of `defaults` as a literal (docstrings aside)."""
    tree = ast.parse(source)
    docstrings = {id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and id(node) not in docstrings:
            found += [f"line {node.lineno}: {node.value!r} is {name}'s default" for name, value in defaults.items() if same_value(node.value, value)]
    return found


@pytest.mark.parametrize("module", MODULES)
def test_no_module_writes_a_default_again(module: str) -> None:
    assert second_definitions((PACKAGE / module).read_text(), VALUED) == [], f"orchestrator/{module}: take it from orchestrator.option_schema"


def test_the_scan_finds_a_default_written_again() -> None:
    assert second_definitions("class S:\n    timeout: float = 300.0\n", VALUED) == ["line 2: 300.0 is timeout's default"]
    assert second_definitions("def f(memory='512m', pids=256): ...\n", VALUED) == ["line 1: '512m' is memory's default", "line 1: 256 is pids_limit's default"]
    assert second_definitions('"""300.0 in a docstring is prose."""\nx = 1\n', VALUED) == []


def test_the_request_groups_and_the_sandbox_hold_the_schemas_defaults() -> None:
    settings = {f.name: f.default for f in fields(SandboxSettings)}
    for name in ("timeout", "max_output", "memory", "pids_limit", "cpus", "tmpfs_size", "image_pull_policy", "mount_mode"):
        assert settings[name] is default(name), name
    assert {f.name: f.default for f in fields(Functions)}["function_type"] is default("function_type")
    sandbox = {f.name: f.default for f in fields(Sandbox)}
    for name in ("timeout", "pids_limit", "cpus", "tmpfs_size", "image_pull_policy", "mount_mode"):
        assert sandbox[name] is default(name), name
    assert sandbox["memory"] == parse_memory(default("memory")) and sandbox["max_output"] == parse_size(default("max_output"))
    assert Invocation(name="x").sandbox == Sandbox()


@pytest.mark.parametrize("option", sorted(EVERY.values(), key=lambda o: o.name), ids=lambda o: o.name)
def test_every_default_converts_as_a_given_value_would(option: Option) -> None:
    """A default is what the CLI would make of its text: the launcher and the CLI agree on it."""
    if option.takes_value and option.default is not None:
        assert option.convert(str(option.default)) == option.default
