"""Where a function's resources may land (orchestrator.write.landing), proved with a hostile
function in a real container image: a resource whose path names a planted git hook, a script, a
file `.krmignore` leaves out, a hidden directory or fnrun's own journal fails the run with one
line naming the path and the image, and leaves every file's bytes and mode as they were, under
`run` and `render`; `sink` into an existing directory obeys the same rule. What a function may
do still works: a new YAML file (created 0644 under the usual umask, never executable), a
resource added to a file fnrun read, render's status in the Kptfile."""

from __future__ import annotations

import stat
import sys
from pathlib import Path

import pytest
import yaml

from testing.io_helpers import assert_one_line_error, fnrun, snapshot, write_files
from testing.runtime_fixtures import build_image

#: The hostile function: the package's items, plus a ConfigMap at functionConfig.data.path (and
#: .index when given) whose data is a shell script. PyYAML only: it runs in the base image and,
#: as an exec function, under the test's python.
HOSTILE = r'''
import sys, yaml
rl = yaml.safe_load(sys.stdin)
data = (rl.get("functionConfig") or {}).get("data") or {}
notes = {"config.kubernetes.io/path": data["path"]}
if data.get("index"):
    notes["config.kubernetes.io/index"] = str(data["index"])
rl["items"] = list(rl.get("items") or []) + [{
    "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "planted", "annotations": notes},
    "data": {"payload": "#!/bin/sh\necho pwned > /tmp/pwned\n"},
}]
yaml.safe_dump(rl, sys.stdout)
'''
DOCKERFILE = 'ARG BASE_IMAGE\nFROM ${BASE_IMAGE}\nCOPY main.py /fn/main.py\nUSER 65534\nENTRYPOINT ["python3", "/fn/main.py"]\n'
IMAGE = "fnrun-test/hostile-landing:v1"

CM = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\ndata:\n  k: v\n"
KPTFILE = "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: pkg\n"
HOOK = "#!/bin/sh\nexit 0\n"
EXECUTABLES = {".git/hooks/pre-commit": HOOK, "hack/update.sh": "#!/bin/sh\necho update\n"}
PACKAGE = {
    "Kptfile": KPTFILE,
    "app.yaml": CM.format(name="app"),
    ".krmignore": "local/\n",
    "local/secret.yaml": CM.format(name="secret"),
    ".github/workflows/ci.yml": "on: push\njobs: {}\n",
    "README.md": "# a package\n",
    **EXECUTABLES,
}
#: Paths a function must never write, and why (a fragment of the one error line).
REFUSED = [
    (".git/hooks/pre-commit", "hidden directory (.git/)"),
    ("hack/update.sh", "not a YAML file"),
    ("local/secret.yaml", "excluded by .krmignore"),
    (".github/workflows/ci.yml", "hidden directory (.github/)"),
    (".config/new.yaml", "hidden directory (.config/)"),
    (".pre-commit-config.yaml", "hidden file"),
    (".fnrun-journal", "hidden file"),
    ("README.md", "not a YAML file"),
    ("notes.txt", "not a YAML file"),
]


@pytest.fixture(scope="module")
def image() -> str:
    return build_image(IMAGE, DOCKERFILE, {"main.py": HOSTILE.encode()})


def _package(root: Path, kptfile: str = KPTFILE) -> Path:
    write_files(root, {**PACKAGE, "Kptfile": kptfile})
    for rel in EXECUTABLES:
        (root / rel).chmod(0o755)
    return root


def _state(root: Path) -> dict[str, tuple[bytes | None, int]]:
    """Every entry under root, hidden ones too: its bytes (None: a directory) and its mode."""
    return {rel: (entry.content, entry.mode) for rel, entry in snapshot(root).items()}


def _pipeline(image: str, path: str, index: str = "") -> str:
    config = f"    configMap:\n      path: '{path}'\n" + (f"      index: '{index}'\n" if index else "")
    return KPTFILE + f"pipeline:\n  mutators:\n  - image: {image}\n" + config


def _run(root: Path, image: str, path: str, *extra: str, prefix: tuple[str, ...] = ()):
    return fnrun("run", str(root), "--image", image, "--image-pull-policy", "never", *extra, "--", f"path={path}", prefix=prefix)


def _failed_once(result, *fragments: str) -> str:
    """Exit 1 (the function's fault), one `fnrun: error:` line naming `fragments`, no traceback."""
    stderr = result.stderr.decode()
    assert result.returncode == 1, stderr
    assert "Traceback" not in stderr
    errors = [line for line in stderr.splitlines() if line.startswith("fnrun: error:")]
    assert len(errors) == 1, stderr
    for fragment in fragments:
        assert fragment in errors[0], stderr
    return errors[0]


@pytest.mark.parametrize("path, reason", REFUSED)
def test_run_refuses_a_path_outside_the_package_files(tmp_path: Path, image: str, path: str, reason: str) -> None:
    root = _package(tmp_path / "pkg")
    before = _state(root)
    _failed_once(_run(root, image, path), f"function {image}", repr(path), reason)
    assert _state(root) == before


@pytest.mark.parametrize("path, reason", REFUSED)
def test_render_refuses_a_path_outside_the_package_files(tmp_path: Path, image: str, path: str, reason: str) -> None:
    root = _package(tmp_path / "pkg", _pipeline(image, path))
    before = _state(root)
    _failed_once(fnrun("render", str(root), "--image-pull-policy", "never", "--no-status"), image, repr(path), reason)
    assert _state(root) == before


def test_render_with_status_records_only_the_failure_in_the_kptfile(tmp_path: Path, image: str) -> None:
    """A failed render writes the root Kptfile's status, as kpt does; nothing else changes."""
    root = _package(tmp_path / "pkg", _pipeline(image, ".git/hooks/pre-commit"))
    before = _state(root)
    line = _failed_once(fnrun("render", str(root), "--image-pull-policy", "never"), ".git/hooks/pre-commit")
    after = _state(root)
    assert {k: v for k, v in after.items() if k != "Kptfile"} == {k: v for k, v in before.items() if k != "Kptfile"}
    assert after["Kptfile"][1] == before["Kptfile"][1]
    status = yaml.safe_load(after["Kptfile"][0])["status"]
    assert any(".git/hooks/pre-commit" in str(c.get("message")) for c in status["conditions"]), (status, line)
    assert (root / ".git/hooks/pre-commit").read_text() == HOOK


@pytest.mark.parametrize("umask", [0o022, 0o000])
def test_a_new_file_is_created_0644_under_the_umask_never_executable(tmp_path: Path, image: str, umask: int) -> None:
    root = _package(tmp_path / "pkg")
    before = _state(root)
    result = _run(root, image, "made/new.yaml", prefix=("sh", "-c", f'umask {umask:03o}; exec "$@"', "sh"))
    assert result.returncode == 0, result.stderr.decode()
    mode = stat.S_IMODE((root / "made/new.yaml").stat().st_mode)
    assert mode == 0o666 & ~umask and not mode & 0o111
    assert yaml.safe_load((root / "made/new.yaml").read_text())["metadata"]["name"] == "planted"
    after = _state(root)
    assert {k: v for k, v in after.items() if not k.startswith("made")} == before


def test_a_function_may_add_to_a_file_fnrun_read(tmp_path: Path, image: str) -> None:
    root = _package(tmp_path / "pkg")
    (root / "app.yaml").chmod(0o600)
    result = fnrun("run", str(root), "--image", image, "--image-pull-policy", "never", "--", "path=app.yaml", "index=1")
    assert result.returncode == 0, result.stderr.decode()
    names = [d["metadata"]["name"] for d in yaml.safe_load_all((root / "app.yaml").read_text())]
    assert names == ["app", "planted"]
    assert stat.S_IMODE((root / "app.yaml").stat().st_mode) == 0o600  # a read file keeps its mode


def test_render_writes_a_new_file_and_the_kptfile_status(tmp_path: Path, image: str) -> None:
    root = _package(tmp_path / "pkg", _pipeline(image, "made/new.yaml"))
    result = fnrun("render", str(root), "--image-pull-policy", "never")
    assert result.returncode == 0, result.stderr.decode()
    assert (root / "made/new.yaml").is_file()
    assert yaml.safe_load((root / "Kptfile").read_text())["status"]["conditions"]
    assert (root / ".git/hooks/pre-commit").read_text() == HOOK


def test_an_exec_function_is_held_to_the_same_rule(tmp_path: Path) -> None:
    """The rule is the write-back's, whatever runs the function: the same script as an exec."""
    root = _package(tmp_path / "pkg")
    script = tmp_path / "hostile.py"
    script.write_text(f"#!{sys.executable}\n{HOSTILE}")
    script.chmod(0o755)
    before = _state(root)
    for path, reason in REFUSED:
        result = fnrun("run", str(root), "--allow-exec", "--exec", str(script), "--", f"path={path}")
        _failed_once(result, str(script), repr(path), reason)
        assert _state(root) == before


@pytest.mark.parametrize("path, reason", REFUSED)
def test_sink_into_an_existing_directory_obeys_the_rule(tmp_path: Path, path: str, reason: str) -> None:
    root = _package(tmp_path / "pkg")
    before = _state(root)
    planted = f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: planted\n  annotations:\n    config.kubernetes.io/path: '{path}'\ndata:\n  k: pwned\n"
    listing = fnrun("source", str(root)).stdout.decode()
    stream = yaml.safe_load(listing)
    stream["items"].append(yaml.safe_load(planted))
    assert_one_line_error(fnrun("sink", str(root), stdin=yaml.safe_dump(stream).encode()), repr(path), reason)
    assert _state(root) == before


def test_sink_still_updates_the_package_files_and_its_kptfile(tmp_path: Path) -> None:
    """`fnrun source | edit | fnrun sink` in place: a Kptfile the sink's reader leaves out is
    still a file it may update, and new YAML files may appear."""
    root = _package(tmp_path / "pkg")
    listing = fnrun("source", str(root)).stdout.decode().replace("name: pkg", "name: renamed").replace("k: v", "k: changed")
    result = fnrun("sink", str(root), stdin=listing.encode())
    assert result.returncode == 0, result.stderr.decode()
    assert "name: renamed" in (root / "Kptfile").read_text()
    assert "k: changed" in (root / "app.yaml").read_text()
    assert (root / "local/secret.yaml").read_text() == CM.format(name="secret")


def test_out_of_place_a_file_the_package_read_lands_as_it_would_in_place(tmp_path: Path, image: str) -> None:
    """`-o DIR`: DIR is new, and a hidden file fnrun read (`.hidden.yaml`) is written there as in
    place; what the function may not do in place it may not do there either."""
    root = _package(tmp_path / "pkg")
    write_files(root, {".hidden.yaml": CM.format(name="hidden")})
    result = _run(root, image, "made/new.yaml", "-o", str(tmp_path / "out"))
    assert result.returncode == 0, result.stderr.decode()
    assert yaml.safe_load((tmp_path / "out/.hidden.yaml").read_text()) == yaml.safe_load(CM.format(name="hidden"))
    assert (tmp_path / "out/made/new.yaml").is_file()
    _failed_once(_run(root, image, ".git/hooks/pre-commit", "-o", str(tmp_path / "out2")), repr(".git/hooks/pre-commit"))
    assert not (tmp_path / "out2").exists()
