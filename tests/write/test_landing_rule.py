"""The landing rule as a property of the write-back (orchestrator.write.landing): whatever paths
resources are given, a write either refuses with an InputError and changes nothing, or changes
only files it read and creates only new YAML files, none of them executable; a file it did not
read keeps its bytes and its mode."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings, strategies as st

from orchestrator import annotations as ann
from orchestrator.errors import InputError
from orchestrator.read.package import read_package
from orchestrator.resource import Resource
from orchestrator.write import writeback
from orchestrator.write.landing import PathChecker, normal
from testing.io_helpers import snapshot, write_files
from testing.sizing import examples

CM = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n"
FILES = {
    "app.yaml": CM.format(name="app"),
    "sub/Kptfile": "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: sub\n",
    "sub/s.yml": CM.format(name="s"),
    ".hidden.yaml": CM.format(name="hidden"),
    "back\\slash.yaml": CM.format(name="slash"),
    "values.yaml": "replicas: 1\n",
    ".krmignore": "local/\n",
    "local/l.yaml": CM.format(name="l"),
    ".git/hooks/pre-commit": "#!/bin/sh\n",
    "hack/update.sh": "#!/bin/sh\n",
    "README.md": "# x\n",
}
EXECUTABLE = (".git/hooks/pre-commit", "hack/update.sh", "sub/s.yml")
PARTS = ["app.yaml", "Kptfile", "sub", "s.yml", ".hidden.yaml", "back\\slash.yaml", "values.yaml", "local", "l.yaml",
         ".git", "hooks", "pre-commit", "hack", "update.sh", "README.md", "new.yaml", "new.yml", "new.txt", ".fnrun-journal",
         ".krmignore", "..", "c:x.yaml", "new", "nul\0.yaml"]


def _package(root: Path) -> Path:
    write_files(root, FILES)
    for rel in EXECUTABLE:
        (root / rel).chmod(0o755)
    return root


def _state(root: Path) -> dict[str, tuple[bytes | None, int]]:
    """Every entry under root, hidden ones too: its bytes (None: a directory) and its mode."""
    return {rel: (entry.content, entry.mode) for rel, entry in snapshot(root).items()}


def _planted(path: str, number: int) -> Resource:
    return Resource({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"planted{number}", "annotations": {ann.PATH: path}}})


@settings(max_examples=examples(150), deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(st.lists(st.lists(st.sampled_from(PARTS), min_size=1, max_size=3).map("/".join), min_size=1, max_size=3))
def test_a_write_changes_only_what_it_read_and_new_yaml_files(paths: list[str]) -> None:
    with tempfile.TemporaryDirectory() as directory:
        root = _package(Path(directory) / "pkg")
        package = read_package(root)
        before = _state(root)
        resources = [*package.resources, *(_planted(path, n) for n, path in enumerate(paths))]
        try:
            writeback.write(root, resources, package)
        except InputError as err:
            assert any(repr(path) in str(err) for path in paths), err
            assert _state(root) == before
            return
        after = _state(root)
        for rel, (content, mode) in before.items():
            if rel not in package.files:
                assert after[rel] == (content, mode), rel  # never read: never touched
        for rel in set(after) - set(before):
            content, mode = after[rel]
            parts = rel.split("/")
            assert not any(part.startswith(".") for part in parts), rel
            assert content is None or (parts[-1].endswith((".yaml", ".yml")) or parts[-1] == "Kptfile") and not mode & 0o111, rel


@pytest.mark.parametrize(
    "path, reason",
    [
        (".git/hooks/pre-commit", "hidden directory (.git/)"),
        ("hack/update.sh", "is not a YAML file"),
        ("local/l.yaml", "excluded by .krmignore"),
        (".fnrun-journal", "is a hidden file"),
        (".new.yaml", "is a hidden file"),
        (".a/.a", "hidden directory (.a/)"),
        ("sub/Kptfile", "existing file fnrun did not read"),  # `run` with declared functions reads no Kptfile
        ("new\\x.yaml", "backslash"),
        ("lat\udce9.yaml", "not UTF-8"),
        ("nul\0.yaml", "NUL character"),
        ("README.md/x.yaml", "under 'README.md', which is not a directory"),
    ],
)
def test_what_a_run_may_not_land_on(tmp_path: Path, path: str, reason: str) -> None:
    root = _package(tmp_path)
    check = writeback.checker(root, read_package(root))
    with pytest.raises(InputError) as raised:
        check(path)
    assert repr(path) in str(raised.value) and reason in str(raised.value)


@pytest.mark.parametrize("path", ["app.yaml", "./app.yaml", "sub//s.yml", ".hidden.yaml", "back\\slash.yaml", "values.yaml", "new.yaml", "a/b/new.yml", "new/Kptfile"])
def test_what_a_run_may_land_on(tmp_path: Path, path: str) -> None:
    root = _package(tmp_path)
    package = read_package(root)
    check = writeback.checker(root, package)
    assert check(path) == root / path
    assert check.is_new(path) == (normal(path) not in package.files)


def test_two_spellings_of_a_file_are_one_file(tmp_path: Path) -> None:
    root = _package(tmp_path)
    package = read_package(root)
    writeback.write(root, [*package.resources, _planted("./app.yaml", 0)], package)
    assert [d["metadata"]["name"] for d in yaml.safe_load_all((root / "app.yaml").read_text())] == ["app", "planted0"]


def test_a_file_and_a_file_under_it_are_refused_before_anything_is_staged(tmp_path: Path) -> None:
    root = _package(tmp_path)
    package = read_package(root)
    before = _state(root)
    with pytest.raises(InputError, match="'new.yaml' and 'new.yaml/x.yaml' cannot both be files"):
        writeback.write(root, [*package.resources, _planted("new.yaml", 0), _planted("new.yaml/x.yaml", 1)], package)
    assert _state(root) == before


def test_a_sink_may_update_an_existing_file_its_reader_left_out(tmp_path: Path) -> None:
    """sink reads no Kptfile, yet `fnrun source` lists it: an existing file the walk would read."""
    root = _package(tmp_path)
    check = writeback.checker(root, read_package(root), update_readable=True)
    assert check("sub/Kptfile") == root / "sub/Kptfile" and not check.is_new("sub/Kptfile")
    for path in (".git/hooks/pre-commit", "hack/update.sh", "local/l.yaml"):
        with pytest.raises(InputError):
            check(path)


def test_a_file_that_appears_after_the_check_is_stale_input_not_overwritten(tmp_path: Path) -> None:
    """A path judged new has no old bytes: a file put there before the commit is reported, not
    replaced (its mode would be kept)."""
    root = _package(tmp_path)
    package = read_package(root)
    check = writeback.checker(root, package)
    plan = writeback.plan(root, [*package.resources, _planted("late.yaml", 0)], package, check)
    (root / "late.yaml").write_text("#!/bin/sh\n")
    (root / "late.yaml").chmod(0o755)
    with pytest.raises(Exception, match="late.yaml appeared"):
        writeback.apply(plan)
    assert (root / "late.yaml").read_text() == "#!/bin/sh\n"


def test_a_stream_is_only_kept_inside_the_root(tmp_path: Path) -> None:
    """`contained` is what a stream (nothing written) and a result's file lookup ask."""
    _package(tmp_path)
    assert PathChecker(tmp_path).contained("back\\slash.yaml") == tmp_path / "back\\slash.yaml"
    with pytest.raises(InputError, match="leaves the package"):
        PathChecker(tmp_path).contained("../x.yaml")
