"""An error that names a package file names it as the user would type it from where they ran
fnrun: the package directory as given (relative, `..`, absolute) joined to the file."""

from __future__ import annotations

from pathlib import Path

import pytest

from testing.io_helpers import fnrun_here

BROKEN = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  bad: [\n"


@pytest.fixture
def package(tmp_path: Path) -> Path:
    root = tmp_path / "work" / "deploy"
    (root / "app").mkdir(parents=True)
    (root / "app" / "x.yaml").write_text(BROKEN)
    (root / "Kptfile").write_text("apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: deploy\n")
    return root


@pytest.mark.engine
@pytest.mark.parametrize("command", [["run", "{dir}", "-i", "fnrun/set-namespace:v1", "--", "namespace=x"], ["render", "{dir}"]])
@pytest.mark.parametrize(("cwd", "typed", "shown"), [
    ("work", "deploy", "deploy/app/x.yaml:6: "),
    ("work/deploy/app", "..", "../app/x.yaml:6: "),
    ("work/deploy", ".", "app/x.yaml:6: "),
    ("work", "ABSOLUTE", "ABSOLUTE/app/x.yaml:6: "),
])
def test_a_package_file_is_named_from_where_fnrun_ran(package: Path, tmp_path: Path, command: list[str], cwd: str, typed: str, shown: str) -> None:
    directory = str(package) if typed == "ABSOLUTE" else typed
    result = fnrun_here(*[word.format(dir=directory) for word in command], cwd=tmp_path / cwd)
    assert result.returncode == 2
    lines = result.stderr.decode().strip().splitlines()
    assert lines[-1].startswith("fnrun: error: " + shown.replace("ABSOLUTE", str(package))), lines
    assert (package / "app" / "x.yaml").read_text() == BROKEN


def test_an_error_that_names_no_package_file_is_left_alone(package: Path, tmp_path: Path) -> None:
    result = fnrun_here("run", "deploy", "-i", "Bad Image!!", cwd=tmp_path / "work")
    assert result.stderr.decode().startswith("fnrun: error: --image: image ")


@pytest.mark.engine
@pytest.mark.parametrize("command", [["run", "{dir}", "-i", "fnrun/set-namespace:v1"], ["render", "{dir}"], ["source", "{dir}"]])
def test_a_missing_package_does_not_exist_and_a_file_is_not_a_directory(tmp_path: Path, command: list[str]) -> None:
    (tmp_path / "file.yaml").write_text("a: 1\n")
    for name, says in (("missing", "does not exist"), ("file.yaml", "not a directory")):
        result = fnrun_here(*[word.format(dir=tmp_path / name) for word in command])
        assert result.returncode == 2
        assert result.stderr.decode() == f"fnrun: error: {tmp_path / name}: {says}\n"
