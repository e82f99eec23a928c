"""Helpers for the package I/O tests: golden cases, API edits, package snapshots, the real CLI."""

from __future__ import annotations

import copy
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from orchestrator.read.package import Package, read_package
from orchestrator.resource import Resource
from orchestrator.write import writeback
from testing.in_process import run_here

REPO = Path(__file__).resolve().parents[2]
GOLDEN = Path(__file__).resolve().parents[1] / "fixtures" / "golden"


@dataclass(frozen=True)
class GoldenCase:
    """One hard YAML case: `input.yaml`, the API edits in `edit.yaml`, the bytes expected after.

    `name.txt`, when present, is the file name the input is read under (e.g. `values.yaml`)."""

    name: str
    directory: Path

    @property
    def file_name(self) -> str:
        named = self.directory / "name.txt"
        return named.read_text().strip() if named.exists() else "resources.yaml"

    @property
    def input(self) -> bytes:
        return (self.directory / "input.yaml").read_bytes()

    @property
    def expected(self) -> bytes:
        return (self.directory / "expected.yaml").read_bytes()

    @property
    def edits(self) -> list[dict[str, Any]]:
        return yaml.safe_load((self.directory / "edit.yaml").read_text()) or []


def golden_cases() -> list[GoldenCase]:
    return [GoldenCase(d.name, d) for d in sorted(GOLDEN.iterdir()) if (d / "input.yaml").exists()]


def _name(resource: Resource) -> str | None:
    meta = resource.data.get("metadata")
    return meta.get("name") if isinstance(meta, dict) else None


def _walk(data: Any, path: list[Any]) -> tuple[Any, Any]:
    """The container holding the last element of `path`, and that element's key or index."""
    for key in path[:-1]:
        data = data[key]
    return data, path[-1]


def apply_edits(resources: list[Resource], edits: list[dict[str, Any]]) -> list[Resource]:
    """The resources after `edits`, made the way library users make them: a changed deep copy of
    `resource.data` handed to `resource.replaced`. Ops: `set: PATH, value: V`, `delete: PATH`,
    `append: PATH, value: V`, `drop: NAME` (remove the resource); `resource: NAME` and `kind: KIND` pick resources."""
    result = list(resources)
    for edit in edits:
        if "drop" in edit:
            result = [r for r in result if _name(r) != edit["drop"]]
            continue
        for position, resource in enumerate(result):
            if edit.get("resource") not in (None, _name(resource)) or edit.get("kind") not in (None, resource.data["kind"]):
                continue
            data = copy.deepcopy(resource.data)
            if "set" in edit:
                holder, key = _walk(data, edit["set"])
                holder[key] = edit["value"]
            elif "delete" in edit:
                holder, key = _walk(data, edit["delete"])
                holder.pop(key, None)
            elif "append" in edit:
                holder, key = _walk(data, edit["append"])
                holder[key].append(edit["value"])
            else:
                raise ValueError(f"unknown edit {edit!r}")
            result[position] = resource.replaced(data)
    return result


def idempotent(edits: list[dict[str, Any]]) -> bool:
    """Whether applying `edits` to their own result changes nothing (no appends or drops)."""
    return all("set" in e or "delete" in e for e in edits)


def edit_package(root: Path, edits: list[dict[str, Any]]) -> tuple[Package, writeback.WritePlan]:
    """Read root, apply `edits` through the API, write back: what a golden case does."""
    package = read_package(root)
    return package, writeback.write(root, apply_edits(package.resources, edits), package)


def write_files(root: Path, files: dict[str, str | bytes]) -> Path:
    """Create a package from {relative path: content}."""
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content.encode() if isinstance(content, str) else content)
    return root


@dataclass(frozen=True)
class Entry:
    content: bytes | None  # None for directories
    mtime_ns: int
    mode: int


def snapshot(root: Path) -> dict[str, Entry]:
    """Every file and directory under root with its bytes, mtime and mode bits (hidden ones too)."""
    found = {}
    for directory, dirs, files in os.walk(root):
        for name in dirs + files:
            path = Path(directory, name)
            stat = path.lstat()
            content = path.read_bytes() if path.is_file() and not path.is_symlink() else None
            found[path.relative_to(root).as_posix()] = Entry(content, stat.st_mtime_ns, stat.st_mode)
    return found


def copy_package(source: Path, target: Path) -> Path:
    shutil.copytree(source, target, symlinks=True)
    return target


def fnrun(*args: str, stdin: bytes | None = None, cwd: Path | None = None, prefix: tuple[str, ...] = ()) -> subprocess.CompletedProcess:
    """Run the real CLI (`python -m orchestrator`), bytes in and out."""
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.run(
        [*prefix, sys.executable, "-m", "orchestrator", *args],
        input=stdin,
        capture_output=True,
        cwd=cwd,
        env=env,
        timeout=300,
    )


def fnrun_here(*args: str, stdin: bytes | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """`fnrun` as above, run by a fork of the test process (testing.in_process): for a test
    whose subject is what the command reads, writes and says, not how fnrun starts or stops."""
    code, out, err = run_here(list(args), stdin or b"", cwd)
    return subprocess.CompletedProcess([sys.executable, "-m", "orchestrator", *args], code, out, err)


def pipe(source_dir: Path, sink_dir: Path) -> subprocess.CompletedProcess:
    """`fnrun source SOURCE | fnrun sink SINK` through a real OS pipe."""
    env = dict(os.environ, PYTHONPATH=str(REPO))
    producer = subprocess.Popen([sys.executable, "-m", "orchestrator", "source", str(source_dir)], stdout=subprocess.PIPE, env=env)
    consumer = subprocess.run(
        [sys.executable, "-m", "orchestrator", "sink", str(sink_dir)], stdin=producer.stdout, capture_output=True, env=env, timeout=300
    )
    assert producer.stdout is not None
    producer.stdout.close()
    assert producer.wait(timeout=300) == 0
    return consumer


def assert_one_line_error(result: subprocess.CompletedProcess, *fragments: str) -> str:
    """Exit code 2, one line on stderr starting `fnrun: error:` and naming `fragments`, no traceback."""
    stderr = result.stderr.decode()
    assert result.returncode == 2, stderr
    assert stderr.startswith("fnrun: error: ") and stderr.count("\n") == 1, stderr
    assert "Traceback" not in stderr
    for fragment in fragments:
        assert fragment in stderr, stderr
    return stderr
