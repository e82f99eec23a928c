"""File names a ResourceList must carry: a backslash is an ordinary character in a POSIX name, so
`back\\slash.yaml` is read, sent to a function and written back like any file (as kpt does); a
name that is not UTF-8 cannot be text in a ResourceList (kpt writes such a file back under its
base64 as a new name), so every command that reads the package refuses it up front, naming it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from testing.io_helpers import assert_one_line_error, fnrun, write_files

CM = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\ndata:\n  k: v\n"
KPTFILE = "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: pkg\npipeline:\n  mutators:\n  - image: fnrun-test/label:v1\n    configMap:\n      tier: web\n"
ODD = b"lat\xe9.yaml"


@pytest.mark.engine
def test_a_backslash_in_a_file_name_reaches_the_function_and_is_written_back(tmp_path: Path) -> None:
    root = write_files(tmp_path / "pkg", {"back\\slash.yaml": CM.format(name="slash"), "a.yaml": CM.format(name="a")})
    result = fnrun("run", str(root), "--image", "fnrun-test/label:v1", "--image-pull-policy", "never", "--", "tier=web")
    assert result.returncode == 0, result.stderr.decode()
    assert "tier: web" in (root / "back\\slash.yaml").read_text()
    assert sorted(p.name for p in root.iterdir()) == ["a.yaml", "back\\slash.yaml"]


@pytest.mark.engine
def test_render_with_a_backslash_in_a_file_name(tmp_path: Path) -> None:
    root = write_files(tmp_path / "pkg", {"Kptfile": KPTFILE, "back\\slash.yaml": CM.format(name="slash")})
    result = fnrun("render", str(root), "--image-pull-policy", "never", "--no-status")
    assert result.returncode == 0, result.stderr.decode()
    assert "tier: web" in (root / "back\\slash.yaml").read_text()


@pytest.mark.engine
@pytest.mark.parametrize("command", [("source",), ("run", "--image", "fnrun-test/label:v1", "--image-pull-policy", "never"), ("render", "--image-pull-policy", "never")])
def test_a_file_name_that_is_not_utf8_is_refused_naming_it(tmp_path: Path, command: tuple[str, ...]) -> None:
    root = write_files(tmp_path / "pkg", {"Kptfile": KPTFILE, "a.yaml": CM.format(name="a")})
    (root / "sub").mkdir()
    with open(os.path.join(os.fsencode(root / "sub"), ODD), "wb") as handle:
        handle.write(CM.format(name="latin").encode())
    before = {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}
    assert_one_line_error(fnrun(command[0], str(root), *command[1:]), "sub/lat\\xe9.yaml", "not UTF-8", "rename")
    assert {p: p.read_bytes() for p in root.rglob("*") if p.is_file()} == before


@pytest.mark.engine
def test_a_name_that_is_not_utf8_outside_what_fnrun_reads_is_left_alone(tmp_path: Path) -> None:
    root = write_files(tmp_path / "pkg", {"a.yaml": CM.format(name="a"), ".krmignore": "old/\n"})
    (root / "old").mkdir()
    for directory, name in ((root, b"caf\xe9.png"), (root / "old", ODD)):
        with open(os.path.join(os.fsencode(directory), name), "wb") as handle:
            handle.write(b"x")
    result = fnrun("run", str(root), "--image", "fnrun-test/label:v1", "--image-pull-policy", "never", "--", "tier=web")
    assert result.returncode == 0, result.stderr.decode()
    assert "tier: web" in (root / "a.yaml").read_text()
