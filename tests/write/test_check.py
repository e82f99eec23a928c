"""`fnrun run --check` (the CI drift gate) and `--diff`: the diff is exactly what a write does."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from testing.pipeline_helpers import assert_one_line_error, deployment, fnrun, function_config, snapshot, write_package

pytestmark = pytest.mark.usefixtures("test_images")
PLAIN = {"GITHUB_ACTIONS": ""}


def _awkward_package(root: Path) -> Path:
    """Every kind of file change: CRLF, no final newline, a created file, a deleted file, an
    untouched file."""
    write_package(
        root,
        {
            "1-generate.yaml": function_config("fnrun-test/generate:v1", {"name": "made"}, name="gen"),
            "2-label.yaml": function_config("fnrun-test/label:v1", {"team": "web"}, name="label"),
            "3-delete.yaml": function_config("fnrun-test/delete:v1", {"names": "gone"}, name="del"),
            "apps/deploy.yaml": deployment("web", "my app"),
            "apps/nonl.yaml": deployment("nonl").rstrip("\n"),
            "gone.yaml": deployment("gone"),
            "notes.txt": "not yaml\n",
        },
    )
    (root / "apps/crlf.yaml").write_bytes(deployment("crlf").replace("\n", "\r\n").encode())
    return root


def _check_bytes(package: Path) -> bytes:
    """The diff exactly as fnrun wrote it (the text helper would turn CRLF lines into LF)."""
    proc = subprocess.run([sys.executable, "-m", "orchestrator", "run", str(package), "--check", "-q"], capture_output=True, env={**os.environ, **PLAIN}, timeout=300)
    assert proc.returncode == 3, proc.stderr
    return proc.stdout


def _tree(root: Path) -> dict[str, bytes]:
    return {k: v[0] for k, v in snapshot(root).items()}


def test_check_prints_the_diff_a_write_would_apply_writes_nothing_and_exits_3(tmp_path: Path) -> None:
    package = _awkward_package(tmp_path / "pkg")
    before = snapshot(package)
    result = fnrun("run", str(package), "--check", env=PLAIN)
    assert_one_line_error(result, "7 files would change", "(1 created, 5 updated, 1 deleted)", code=3)
    assert snapshot(package) == before  # bytes and mtimes: nothing written
    assert "diff --git a/apps/deploy.yaml b/apps/deploy.yaml\n--- a/apps/deploy.yaml\n+++ b/apps/deploy.yaml\n" in result.stdout
    assert "diff --git a/made_configmap.yaml b/made_configmap.yaml\nnew file mode 100644\n--- /dev/null\n+++ b/made_configmap.yaml\n" in result.stdout
    assert "deleted file mode 100644\n--- a/gone.yaml\n+++ /dev/null\n" in result.stdout
    assert "\\ No newline at end of file\n" in result.stdout
    assert "notes.txt" not in result.stdout
    # applying the diff to a copy gives byte for byte what `fnrun run` writes
    patched = tmp_path / "patched"
    shutil.copytree(package, patched)
    patch = tmp_path / "check.diff"
    patch.write_bytes(_check_bytes(package))
    applied = subprocess.run(["git", "apply", "--whitespace=nowarn", str(patch)], cwd=patched, capture_output=True, text=True)
    assert applied.returncode == 0, applied.stderr
    written = fnrun("run", str(package), env=PLAIN)
    assert written.code == 0, written
    assert _tree(patched) == _tree(package)
    crlf = (package / "apps/crlf.yaml").read_bytes()
    assert b"team: web\r\n" in crlf and crlf.count(b"\r\n") == crlf.count(b"\n")


def test_check_of_a_package_already_run_is_silent_and_exits_0(tmp_path: Path) -> None:
    write_package(tmp_path, {"app/deploy.yaml": deployment("web"), "app/fn.yaml": function_config("fnrun-test/label:v1", {"team": "web"})})
    assert fnrun("run", str(tmp_path), env=PLAIN).code == 0
    before = snapshot(tmp_path)
    result = fnrun("run", str(tmp_path), "--check", env=PLAIN)
    assert result.code == 0, result
    assert result.stdout == ""
    assert "0 files would change" in result.stderr
    assert snapshot(tmp_path) == before


def test_diff_writes_and_prints_the_same_diff_as_check(tmp_path: Path) -> None:
    checked = _awkward_package(tmp_path / "checked")
    shutil.copytree(checked, tmp_path / "written")
    check = fnrun("run", str(checked), "--check", env=PLAIN)
    diff = fnrun("run", str(tmp_path / "written"), "--diff", env=PLAIN)
    assert diff.code == 0, diff
    assert diff.stdout == check.stdout.replace(str(checked), str(tmp_path / "written"))
    assert fnrun("run", str(checked), env=PLAIN).code == 0
    assert _tree(checked) == _tree(tmp_path / "written")


def test_check_with_a_failing_function_is_the_functions_failure(tmp_path: Path) -> None:
    write_package(tmp_path, {"d.yaml": deployment("d"), "fn.yaml": function_config("fnrun-test/fail:v1", {"exitCode": "4"})})
    before = snapshot(tmp_path)
    result = fnrun("run", str(tmp_path), "--check", env=PLAIN)
    assert_one_line_error(result, "fnrun-test/fail:v1", "exit code 4", code=1)
    assert result.stdout == ""
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (("--check", "--output", "-"), "do not go with -o"),
        (("--diff", "--output", "-"), "do not go with -o"),
    ],
)
def test_check_and_diff_refuse_stdout_output(tmp_path: Path, args: tuple[str, ...], needle: str) -> None:
    write_package(tmp_path, {"d.yaml": deployment("d"), "fn.yaml": function_config("fnrun-test/label:v1", {"a": "b"})})
    before = snapshot(tmp_path)
    result = fnrun("run", str(tmp_path), *args, env=PLAIN)
    assert_one_line_error(result, needle, code=2)
    assert snapshot(tmp_path) == before


def test_check_refuses_a_package_on_stdin() -> None:
    result = fnrun("run", "-", "--check", "--image", "fnrun-test/identity:v1", stdin="apiVersion: v1\nkind: List\nitems: []\n", env=PLAIN)
    assert_one_line_error(result, "--check", code=2)
