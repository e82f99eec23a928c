"""`fnrun init function NAME` writes a function on the SDK, a Dockerfile and a case that passes
under `fnrun test`, both as the exec function it scaffolds and as the image its Dockerfile builds;
the case fails once the function changes; bad names and existing directories are one line, exit 2."""

from __future__ import annotations

import subprocess
import uuid
from pathlib import Path

import pytest

from testing.pipeline_helpers import fnrun

pytestmark = pytest.mark.usefixtures("test_images")


def test_the_scaffold_passes_as_exec_and_as_image_and_fails_when_changed(tmp_path: Path) -> None:
    made = fnrun("init", "function", "add-greeting", "-C", str(tmp_path))
    assert made.code == 0, made.stderr
    root = tmp_path / "add-greeting"
    assert {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()} == {
        "add_greeting.py", "Dockerfile", "tests/sets-the-greeting/resources.yaml",
        "tests/sets-the-greeting/.expected/config.yaml", "tests/sets-the-greeting/.expected/diff.patch"}
    assert "+    greeting: hello" in (root / "tests/sets-the-greeting/.expected/diff.patch").read_text()
    passed = fnrun("test", str(root / "tests"))
    assert passed.code == 0 and "1 cases: 1 passed" in passed.stdout, passed.stdout + passed.stderr

    image = f"fnrun-test/casetest-{uuid.uuid4().hex[:8]}:v1"
    built = subprocess.run(["docker", "build", "-q", "-t", image, str(root)], capture_output=True, text=True, timeout=600)
    assert built.returncode == 0, built.stderr
    try:
        config = root / "tests/sets-the-greeting/.expected/config.yaml"
        config.write_text(config.read_text().replace("execPath: ../../../add_greeting.py", f"image: {image}"))
        as_image = fnrun("test", str(root / "tests"))
        assert as_image.code == 0 and "1 cases: 1 passed" in as_image.stdout, as_image.stdout + as_image.stderr
    finally:
        subprocess.run(["docker", "rmi", "-f", image], capture_output=True, timeout=120)

    function = root / "add_greeting.py"
    function.write_text(function.read_text().replace('set_label("greeting", config.greeting)', 'set_label("greeting", config.greeting + "-there")'))
    config.write_text(config.read_text().replace(f"image: {image}", "execPath: ../../../add_greeting.py"))
    changed = fnrun("test", str(root / "tests"))
    assert changed.code == 1 and "++    greeting: hello-there" in changed.stdout, changed.stdout + changed.stderr


@pytest.mark.parametrize("name", ["Add", "9x", "a_b", "x-", "", "ä"])
def test_a_bad_name_is_one_line_exit_2(tmp_path: Path, name: str) -> None:
    done = fnrun("init", "function", name, "-C", str(tmp_path))
    assert done.code == 2 and len(done.stderr.strip().splitlines()) == 1 and "DNS label" in done.stderr, done.stderr
    assert not any(tmp_path.iterdir())


def test_an_existing_directory_is_left_alone(tmp_path: Path) -> None:
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "keep.txt").write_text("mine")
    done = fnrun("init", "function", "taken", "-C", str(tmp_path))
    assert done.code == 2 and "already exists" in done.stderr
    assert [p.name for p in (tmp_path / "taken").iterdir()] == ["keep.txt"]
