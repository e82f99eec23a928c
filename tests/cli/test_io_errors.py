"""Bad input through the real CLI: one line on stderr naming the file (and line), exit code 2,
no traceback, and nothing written."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from testing.io_helpers import REPO, assert_one_line_error, fnrun, fnrun_here, snapshot, write_files

GOOD = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: good\ndata:\n  k: v\n"


@pytest.mark.parametrize(
    "name, content, fragments",
    [
        ("bad.yaml", b"apiVersion: v1\nkind: A\nmetadata:\n  name: [x\n", ("bad.yaml:5:", "flow sequence")),
        ("utf8.yaml", b"apiVersion: v1\nkind: A\nmetadata:\n  name: caf\xe9\n", ("utf8.yaml:4: invalid UTF-8",)),
        ("tabs.yaml", b"apiVersion: v1\nkind: A\nmetadata:\n\tname: a\n", ("tabs.yaml:4:",)),
    ],
)
def test_bad_package_file(tmp_path: Path, name: str, content: bytes, fragments: tuple[str, ...]) -> None:
    """`source` reports it; `sink` into a package holding it reports it and writes nothing. (YAML
    that parses but is not KRM or not faithfully readable is left alone: tests/read/test_odd_files.py.)"""
    root = write_files(tmp_path / "pkg", {"good.yaml": GOOD, f"sub/{name}": content})
    assert_one_line_error(fnrun_here("source", str(root)), *(f"sub/{f}" if f.startswith(name) else f for f in fragments))
    before = snapshot(root)
    stream = GOOD.replace("good", "other").encode()
    assert_one_line_error(fnrun_here("sink", str(root), stdin=stream), f"sub/{name}")
    assert snapshot(root) == before


def test_symlink_out_of_the_package(tmp_path: Path) -> None:
    root = write_files(tmp_path / "pkg", {"good.yaml": GOOD})
    (root / "escape.yaml").symlink_to("/etc/hostname")
    assert_one_line_error(fnrun_here("source", str(root)), "escape.yaml: symlink points outside the package")


def test_broken_symlink_and_fifo_are_unreadable_files(tmp_path: Path) -> None:
    root = write_files(tmp_path / "pkg", {"good.yaml": GOOD})
    (root / "dangling.yaml").symlink_to(root / "missing.yaml")
    assert_one_line_error(fnrun_here("source", str(root)), "dangling.yaml: cannot read: a broken symlink")
    (root / "dangling.yaml").unlink()
    os.mkfifo(root / "pipe.yaml")
    assert_one_line_error(fnrun_here("source", str(root)), "pipe.yaml: cannot read: not a regular file")


def _without_file_capabilities() -> tuple[str, ...]:
    """A prefix that runs a command as root without CAP_DAC_OVERRIDE/CAP_DAC_READ_SEARCH, so that
    file modes apply to it: a real permission error without switching users."""
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("setpriv is not installed")
    prefix = (setpriv, "--bounding-set=-dac_override,-dac_read_search")
    probe = subprocess.run([*prefix, "true"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip(f"cannot drop capabilities here: {probe.stderr.decode().strip()}")
    return prefix


@pytest.mark.parametrize("what", ["file", "directory"])
def test_unreadable_file_or_directory(tmp_path: Path, what: str) -> None:
    prefix = _without_file_capabilities() if os.geteuid() == 0 else ()
    root = write_files(tmp_path / "pkg", {"good.yaml": GOOD, "secret/locked.yaml": GOOD.replace("good", "locked")})
    locked = root / "secret" / ("locked.yaml" if what == "file" else "")
    locked.chmod(0)
    try:
        result = fnrun("source", str(root), prefix=prefix)
        expected = "secret/locked.yaml: cannot read: Permission denied" if what == "file" else "secret/: cannot read directory: Permission denied"
        assert_one_line_error(result, expected)
    finally:
        locked.chmod(0o755)


@pytest.mark.parametrize(
    "stdin, fragments",
    [
        (b"apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: 3\n", ("stdin:3: ResourceList items must be a list",)),
        (b"apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- apiVersion: v1\n  metadata: {name: x}\n", ("stdin:4: items[0] is a mapping without apiVersion or kind",)),
        (b"apiVersion: config.kubernetes.io/v9\nkind: ResourceList\nitems: []\n", ("stdin:1: ResourceList with unsupported apiVersion 'config.kubernetes.io/v9'",)),
        (b"{{{{ garbage", ("stdin:", "flow mapping")),
        (b"hello world\n", ("stdin:1: expected a resource", "found a scalar")),
        (b"\x89PNG\r\n\x1a\n\x00\x00", ("stdin:1: invalid UTF-8",)),
        (b"apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- apiVersion: v1\n  kind: A\n  kind: B\n", ("stdin:6: duplicate key 'kind'",)),
    ],
)
def test_sink_refuses_what_is_not_a_resource_list(tmp_path: Path, stdin: bytes, fragments: tuple[str, ...]) -> None:
    existing = write_files(tmp_path / "pkg", {"good.yaml": GOOD})
    before = snapshot(existing)
    assert_one_line_error(fnrun_here("sink", str(existing), stdin=stdin), *fragments)
    assert snapshot(existing) == before
    assert_one_line_error(fnrun_here("sink", str(tmp_path / "new"), stdin=stdin), *fragments)
    assert not (tmp_path / "new").exists()


@pytest.mark.parametrize(
    "path, fragment",
    [
        ("/tmp/evil.yaml", "resource path '/tmp/evil.yaml' must be relative"),
        ("../evil.yaml", "resource path '../evil.yaml' leaves the package"),
        ("escape/evil.yaml", "escape: symlink points outside the package"),  # refused already when the package is read
    ],
)
def test_sink_refuses_paths_leaving_the_package_and_writes_nothing(tmp_path: Path, path: str, fragment: str) -> None:
    root = write_files(tmp_path / "pkg", {"good.yaml": GOOD})
    (tmp_path / "outside").mkdir()
    before = snapshot(root)
    if path.startswith("escape/"):
        (root / "escape").symlink_to(tmp_path / "outside")
    stream = (
        GOOD.replace("k: v", "k: changed")
        + f"---\napiVersion: v1\nkind: A\nmetadata:\n  name: evil\n  annotations:\n    config.kubernetes.io/path: '{path}'\n"
    )
    assert_one_line_error(fnrun_here("sink", str(root), stdin=stream.encode()), fragment)
    (root / "escape").unlink(missing_ok=True)
    assert snapshot(root) == before
    assert list((tmp_path / "outside").iterdir()) == [] and not (tmp_path / "evil.yaml").exists()


def test_source_of_a_missing_directory(tmp_path: Path) -> None:
    assert_one_line_error(fnrun_here("source", str(tmp_path / "nope")), "nope: does not exist")


def test_source_into_a_full_device_is_one_line(tmp_path: Path) -> None:
    """A real write error on stdout (/dev/full: ENOSPC) is reported, not a traceback."""
    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full")
    root = write_files(tmp_path / "pkg", {"good.yaml": GOOD})
    with open("/dev/full", "wb") as full:
        result = subprocess.run(
            [sys.executable, "-m", "orchestrator", "source", str(root)], stdout=full, stderr=subprocess.PIPE,
            env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=120,
        )
    assert_one_line_error(result, "cannot write the ResourceList: No space left on device")
