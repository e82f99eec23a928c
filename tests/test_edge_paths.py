"""The CLI edge names a package file from where the user typed the command; an error's context and
its fix are each said once, whatever the edge rewrote (a start failure is `WHAT; fix: FIX`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestrator.edge import _paths_as_typed
from orchestrator.errors import EnvironmentProblem, InputError
from orchestrator.runtimes.container.start_failures import StartRefused


def _raised(directory: Path, err: Exception) -> Exception:
    with pytest.raises(type(err)) as caught, _paths_as_typed(str(directory)):
        raise err
    return caught.value


def test_context_and_fix_are_said_once(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "fn.yaml").write_text("kind: X\n")
    err = _raised(tmp_path, StartRefused("function f: cannot start it", context="a/fn.yaml", fix="use runc"))
    assert str(err) == f"{(tmp_path / 'a' / 'fn.yaml').as_posix()}: function f: cannot start it; fix: use runc"
    plain = _raised(tmp_path, EnvironmentProblem("engine gone", context="a/fn.yaml", fix="start it"))
    assert str(plain) == f"{(tmp_path / 'a' / 'fn.yaml').as_posix()}: engine gone; start it"


def test_an_error_naming_no_package_file_is_unchanged(tmp_path: Path) -> None:
    err = _raised(tmp_path, InputError("--memory 'lots': use a size", fix="such as 512m"))
    assert str(err) == "--memory 'lots': use a size; such as 512m"
