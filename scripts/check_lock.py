"""Check that a lock still serves pyproject.toml: every requirement of fnrun and its [test] extra
(only fnrun's own for requirements-runtime.lock) is pinned in the lock at a version its range allows, and the installed set is consistent
(`pip check`). Run by scripts/install-locked inside the venv it filled; exits 1 with one line."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

try:
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name
except ImportError:  # a venv holding only the lock's pins always has packaging (pytest needs it)
    from pip._vendor.packaging.requirements import Requirement  # type: ignore[no-redef]
    from pip._vendor.packaging.utils import canonicalize_name  # type: ignore[no-redef]

ROOT = Path(__file__).resolve().parent.parent
RUNTIME_LOCK = "requirements-runtime.lock"


def pins(lock: Path) -> dict[str, str]:
    """name -> pinned version, from the lock's `name==version` lines (markers ignored)."""
    out: dict[str, str] = {}
    for line in lock.read_text().splitlines():
        if line[:1].isalnum() and "==" in line:
            name, _, rest = line.partition("==")
            out[canonicalize_name(name.strip())] = rest.split()[0].rstrip("\\").split(";")[0].strip()
    return out


def problems(lock: Path) -> list[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted = [*project["dependencies"]]
    if lock.name != RUNTIME_LOCK:  # the runtime lock holds fnrun's own dependencies only
        wanted += project["optional-dependencies"]["test"]
    pinned = pins(lock)
    found = []
    for text in wanted:
        req = Requirement(text)
        if req.marker is not None and not req.marker.evaluate({"extra": "test"}):
            continue
        version = pinned.get(canonicalize_name(req.name))
        if version is None:
            found.append(f"{req.name} is not pinned")
        elif not req.specifier.contains(version, prereleases=True):
            found.append(f"{req.name}=={version} is outside pyproject.toml's {req.specifier}")
    return found


def main() -> int:
    lock = Path(sys.argv[1] if len(sys.argv) > 1 else ROOT / "requirements.lock")
    found = problems(lock)
    if found:
        print(f"check_lock: ERROR: {lock.name} is stale: {'; '.join(found)} (run scripts/lock-deps)", file=sys.stderr)
        return 1
    check = subprocess.run([sys.executable, "-m", "pip", "check"], capture_output=True, text=True)
    if check.returncode != 0:
        first = (check.stdout or check.stderr).strip().splitlines()[0]
        print(f"check_lock: ERROR: the installed set is inconsistent: {first}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
