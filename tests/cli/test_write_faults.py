"""A package on a file system that refuses the write (read-only, full) through the real CLI: one
line naming the file, exit 4 (the machine, not the package), no traceback, every file as it was,
no temp file left; in `render`, the failed step's own error stays the error."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from testing.io_helpers import REPO, fnrun_here, snapshot, write_files

CM = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {}\ndata:\n  k: v\n"
KPTFILE = "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: root\npipeline:\n  mutators:\n  - exec: {}\n"
#: A function that changes every resource and makes it bigger (about 2 kB each).
GROW = f"#!{sys.executable}\nimport sys\nsys.stdout.write(sys.stdin.read().replace('  k: v\\n', '  k: w\\n  pad: ' + 'x' * 2000 + '\\n'))\n"

#: A function that changes every resource and keeps its size.
CHANGE = f"#!{sys.executable}\nimport sys\nsys.stdout.write(sys.stdin.read().replace('  k: v\\n', '  k: w\\n'))\n"


class Mounts:
    """tmpfs mounts made for one test, unmounted at its end."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.made: list[Path] = []

    def tmpfs(self, name: str, size: str) -> Path:
        target = self.base / name
        target.mkdir()
        done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size},mode=0755", "fnrun-test", str(target)], capture_output=True)
        if done.returncode != 0:
            pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
        self.made.append(target)
        return target

    def read_only(self, target: Path) -> None:
        subprocess.run(["mount", "-o", "remount,ro", str(target)], check=True, capture_output=True)


@pytest.fixture
def mounts(tmp_path: Path) -> Iterator[Mounts]:
    if os.geteuid() != 0:
        pytest.skip("mounting a file system needs root")
    made = Mounts(tmp_path)
    try:
        yield made
    finally:
        for target in reversed(made.made):
            subprocess.run(["umount", str(target)], capture_output=True)


def _function(tmp_path: Path, text: str = GROW) -> str:
    path = tmp_path / "fn.py"
    path.write_text(text)
    path.chmod(0o755)
    return str(path)


def _files(root: Path) -> dict[str, tuple[bytes | None, int, int]]:
    """Every file under root with its bytes, mtime and mode (a directory's own mtime moves when a
    temp file is made and removed in it: that is not a change of the package)."""
    return {path: (entry.content, entry.mtime_ns, entry.mode) for path, entry in snapshot(root).items() if entry.content is not None}


def _assert_environment_error(result: subprocess.CompletedProcess, *fragments: str) -> None:
    stderr = result.stderr.decode()
    assert result.returncode == 4, stderr
    lines = [line for line in stderr.splitlines() if not line.startswith("[")]  # progress lines: [ok] fn
    assert len(lines) == 1 and lines[0].startswith("fnrun: error: "), stderr
    assert "Traceback" not in stderr
    for fragment in fragments:
        assert fragment in lines[0], stderr


def test_a_read_only_package_is_one_line_exit_4_and_untouched(tmp_path: Path, mounts: Mounts) -> None:
    disk = mounts.tmpfs("ro", "1m")
    root = write_files(disk / "pkg", {"a.yaml": CM.format("a"), "sub/b.yaml": CM.format("b"), "Kptfile": KPTFILE.format(_function(tmp_path))})
    mounts.read_only(disk)
    before = snapshot(root)
    ran = fnrun_here("run", str(root), "--allow-exec", "--exec", _function(tmp_path))
    _assert_environment_error(ran, "a.yaml", "Read-only file system", "nothing was written")
    rendered = fnrun_here("render", str(root), "--allow-exec")
    _assert_environment_error(rendered, "Read-only file system")
    changed = fnrun_here("source", str(root)).stdout.replace(b"k: v", b"k: changed")
    _assert_environment_error(fnrun_here("sink", str(root), stdin=changed), "Read-only file system")
    _assert_environment_error(fnrun_here("sink", str(root / "new"), stdin=changed), "Read-only file system")
    assert snapshot(root) == before


def test_a_failed_render_on_a_read_only_package_reports_the_failed_step(tmp_path: Path, mounts: Mounts) -> None:
    """A failed render writes the root Kptfile's status; when that cannot land the step's failure
    is still the error (exit 1), with one warning line that the status was not written."""
    disk = mounts.tmpfs("ro", "1m")
    root = write_files(disk / "pkg", {"a.yaml": CM.format("a"), "Kptfile": KPTFILE.format("/bin/false")})
    mounts.read_only(disk)
    before = snapshot(root)
    result = fnrun_here("render", str(root), "--allow-exec")
    stderr = result.stderr.decode()
    assert result.returncode == 1, stderr
    assert "Traceback" not in stderr
    lines = [line for line in stderr.splitlines() if not line.startswith("[")]
    assert lines[-1].startswith("fnrun: error: ") and "false" in lines[-1] and "exit code 1" in lines[-1], stderr
    assert len(lines) == 2 and lines[0].startswith("fnrun: warning: ") and "Read-only file system" in lines[0], stderr
    assert snapshot(root) == before


def test_a_full_package_is_one_line_exit_4_and_untouched(tmp_path: Path, mounts: Mounts) -> None:
    disk = mounts.tmpfs("full", "64k")
    root = write_files(disk / "pkg", {f"c{n}.yaml": CM.format(f"c{n}") for n in range(12)})
    before = _files(root)
    result = fnrun_here("run", str(root), "--allow-exec", "--exec", _function(tmp_path))
    _assert_environment_error(result, "No space left on device", "nothing was written")
    assert _files(root) == before


@pytest.mark.parametrize("way", ["run", "sink"])
def test_no_space_midway_through_150_files_leaves_the_package_as_it_was(tmp_path: Path, mounts: Mounts, way: str) -> None:
    """150 one-page files on a file system with room for about 100 more pages: the staging of the
    bigger files fails partway (in fnrun for run, in the sink's forked stager for sink)."""
    disk = mounts.tmpfs("full", "1m")
    root = write_files(disk / "pkg", {f"d{n % 7}/c{n}.yaml": CM.format(f"c{n}") for n in range(150)})
    before = _files(root)
    if way == "run":
        result = fnrun_here("run", str(root), "--allow-exec", "--exec", _function(tmp_path))
    else:
        listed = fnrun_here("source", str(root))
        assert listed.returncode == 0, listed.stderr.decode()
        grown = listed.stdout.replace(b"    k: v\n", b"    k: w\n    pad: " + b"x" * 2000 + b"\n")
        result = fnrun_here("sink", str(root), stdin=grown)
    _assert_environment_error(result, "No space left on device", "nothing was written")
    assert _files(root) == before
    assert not [p for p in root.rglob("*fnrun*")]


def test_a_write_the_package_itself_refuses_is_still_bad_input(tmp_path: Path) -> None:
    """Not every refused write is the machine's: a file in the way of a directory is the package's (exit 2)."""
    root = write_files(tmp_path / "pkg", {"a.yaml": CM.format("a"), "d": "not a directory\n"})
    stream = (CM.format("b").replace("name: b", "name: b\n  annotations:\n    config.kubernetes.io/path: d/b.yaml")).encode()
    result = subprocess.run([sys.executable, "-m", "orchestrator", "sink", str(root)], input=stream, capture_output=True, env={**os.environ, "PYTHONPATH": str(REPO)})
    stderr = result.stderr.decode()
    assert result.returncode == 2 and stderr.count("\n") == 1 and "Traceback" not in stderr, stderr


def test_no_room_left_for_the_journal(tmp_path: Path, mounts: Mounts) -> None:
    """Eight one-page files and eight staged ones fill sixteen pages: the journal's own write is
    the one that fails, and leaves no half journal behind."""
    disk = mounts.tmpfs("full", "64k")
    root = write_files(disk / "pkg", {f"c{n}.yaml": CM.format(f"c{n}") for n in range(8)})
    before = _files(root)
    result = fnrun_here("run", str(root), "--allow-exec", "--exec", _function(tmp_path, CHANGE))
    _assert_environment_error(result, "No space left on device", "nothing was written")
    assert _files(root) == before
