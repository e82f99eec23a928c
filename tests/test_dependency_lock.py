"""requirements.lock: it serves pyproject.toml's ranges, and the locked install refuses a missing
lock, a tampered hash and an entry without a hash with one line each, never installing unpinned."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import venv
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
INSTALL = REPO / "scripts" / "install-locked"


def test_the_lock_pins_every_requirement_within_its_range() -> None:
    result = subprocess.run([sys.executable, str(REPO / "scripts" / "check_lock.py")], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    lock = (REPO / "requirements.lock").read_text()
    lines = lock.splitlines()
    pinned = [i for i, line in enumerate(lines) if line[:1].isalnum() and "==" in line]
    assert len(pinned) > 20 and all(lines[i + 1].strip().startswith("--hash=sha256:") for i in pinned)


def test_a_stale_lock_is_named(tmp_path: Path) -> None:
    lock = tmp_path / "requirements.lock"
    kept = [block for block in (REPO / "requirements.lock").read_text().split("\n") if not block.lower().startswith("pyyaml==")]
    lock.write_text("\n".join(kept))
    result = subprocess.run([sys.executable, str(REPO / "scripts" / "check_lock.py"), str(lock)], capture_output=True, text=True)
    assert result.returncode == 1
    assert result.stderr.count("\n") == 1 and "PyYAML is not pinned" in result.stderr and "scripts/lock-deps" in result.stderr


def _wheel(folder: Path) -> Path:
    """A tiny real wheel, so pip's hash checking runs offline against a local find-links folder."""
    folder.mkdir()
    path = folder / "tinypkg-1.0-py3-none-any.whl"
    files = {
        "tinypkg/__init__.py": "VALUE = 1\n",
        "tinypkg-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: tinypkg\nVersion: 1.0\n",
        "tinypkg-1.0.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = "".join(f"{name},,\n" for name in files) + "tinypkg-1.0.dist-info/RECORD,,\n"
    with zipfile.ZipFile(path, "w") as archive:
        for name, text in {**files, "tinypkg-1.0.dist-info/RECORD": record}.items():
            archive.writestr(name, text)
    return path


@pytest.fixture(scope="module")
def target(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A new virtualenv with pip, as `python -m venv` makes it: a copy of one made once per Python
    and kept in the user's cache (ensurepip takes ten seconds on a small machine), so every run
    still starts from a clean one. The script runs its pip as `VENV/bin/python -m pip`, which a
    copy serves as the original does."""
    root = tmp_path_factory.mktemp("venv") / "v"
    shutil.copytree(_pristine_venv(), root, symlinks=True)
    return root


def _pristine_venv() -> Path:
    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "fnrun-tests"
    key = hashlib.sha256(f"{sys.version} {sys.base_prefix}".encode()).hexdigest()[:16]
    kept = cache / f"venv-with-pip-{key}"
    if not (kept / "bin" / "python").exists():
        cache.mkdir(parents=True, exist_ok=True)
        made = Path(tempfile.mkdtemp(dir=cache, prefix="making-"))
        venv.create(made / "v", with_pip=True)
        try:
            (made / "v").rename(kept)  # whole or not at all: another run may make it beside this one
        except OSError:
            if not (kept / "bin" / "python").exists():
                raise
        finally:
            shutil.rmtree(made, ignore_errors=True)
    return kept


def _install(target: Path, lock: Path, links: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(links), "PIP_CONFIG_FILE": os.devnull}
    return subprocess.run(["bash", str(INSTALL), str(target), str(lock)], capture_output=True, text=True, env=env, timeout=300)


def test_a_missing_lock_is_refused(tmp_path: Path, target: Path) -> None:
    result = _install(target, tmp_path / "requirements.lock", tmp_path)
    assert result.returncode == 1
    assert result.stderr.count("\n") == 1 and "requirements.lock is missing" in result.stderr


@pytest.mark.parametrize("entry", ["tinypkg==1.0 --hash=sha256:" + "0" * 64, "tinypkg==1.0"])
def test_a_tampered_lock_is_refused_and_nothing_installed(entry: str, tmp_path: Path, target: Path) -> None:
    wheel = _wheel(tmp_path / "wheels")
    lock = tmp_path / "requirements.lock"
    real = hashlib.sha256(wheel.read_bytes()).hexdigest()
    # The entry without a hash sits beside a hashed one, as a hand edit would leave it.
    lock.write_text(entry + "\n" if "--hash" in entry else f"{entry}\nother==2.0 --hash=sha256:{real}\n")
    result = _install(target, lock, wheel.parent)
    assert result.returncode == 1, result
    assert result.stderr.startswith("install-locked: ERROR: ") and result.stderr.count("\n") == 1, result.stderr
    assert str(lock) in result.stderr and "scripts/lock-deps" in result.stderr
    check = subprocess.run([str(target / "bin" / "python"), "-c", "import tinypkg"], capture_output=True)
    assert check.returncode != 0  # nothing unpinned went in


def _entries(lock: Path) -> dict[str, tuple[str, frozenset[str]]]:
    """name -> (name==version, its hashes); a marker is left out (it may differ: a package only
    Windows needs for fnrun can be needed everywhere by a test tool)."""
    entries: dict[str, tuple[str, frozenset[str]]] = {}
    name = ""
    for line in lock.read_text().splitlines():
        if line[:1].isalnum() and "==" in line:
            name = line.split("==", 1)[0].lower()
            entries[name] = (line.split(";")[0].split()[0], frozenset())
        elif line.strip().startswith("--hash=") and name:
            pin, hashes = entries[name]
            entries[name] = (pin, hashes | {line.strip().rstrip(" \\")})
    return entries


def test_the_runtime_lock_is_the_full_lock_cut_to_fnrun_s_own_dependencies() -> None:
    """The Action installs requirements-runtime.lock: every pin and hash in it is the full lock's,
    and it serves pyproject.toml's runtime dependencies (not the test tools)."""
    runtime, full = _entries(REPO / "requirements-runtime.lock"), _entries(REPO / "requirements.lock")
    assert runtime and all(full.get(name) == entry for name, entry in runtime.items())
    for needed in ("pyyaml", "ruamel-yaml", "docker", "typer", "rich", "setuptools"):
        assert needed in runtime
    for test_tool in ("pytest", "hypothesis", "testcontainers", "mkdocs"):
        assert test_tool not in runtime
