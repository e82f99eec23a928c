"""The static helper a warm container runs as PID 1 and starts each call through (fnrun-warm.c).

It must run in any image, including those with no shell and no libc (static Go binaries on
distroless), so it is one statically linked binary, carried into the container read-only. fnrun
builds it from the C source beside this module with the system's C compiler (`cc -static`: gcc
and libc6-dev on Debian, which `.ci/setup` installs), once per source version, into fnrun's cache
directory; nothing is downloaded. FNRUN_WARM_HELPER names a binary built elsewhere instead. Where
no compiler can build it, warm containers are off and `fnrun doctor` says why.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
import threading
from pathlib import Path

SOURCE = Path(__file__).with_name("fnrun-warm.c")
NAME = "fnrun-warm"
TARGET = "/.fnrun-warm"  # where the helper's directory is mounted, read-only, in the container
ENV_HELPER = "FNRUN_WARM_HELPER"

_lock = threading.Lock()
_built: tuple[Path | None, str] | None = None


def helper_home() -> Path:
    """$XDG_CACHE_HOME/fnrun, else ~/.cache/fnrun: the user's, whatever FNRUN_CACHE_DIR says (a
    result cache per CI job or test must not cost a compiler run each)."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "fnrun"


def helper_dir() -> tuple[Path | None, str]:
    """(the directory holding the helper binary, "") or (None, why there is none)."""
    global _built
    with _lock:
        if _built is None:
            _built = _find_or_build()
        return _built


def ready() -> bool:
    """Whether the helper is there without building it (the launcher starts a warm container
    early only then: a compiler run is the run's own business, reported as such)."""
    given = os.environ.get(ENV_HELPER, "").strip()
    if given:
        return Path(given).name == NAME and os.access(given, os.X_OK)
    return os.access(_built_home() / NAME, os.X_OK)


def _built_home() -> Path:
    """Where this source version's helper is built: one directory per version of fnrun-warm.c."""
    return helper_home() / "warm-helper" / hashlib.sha256(SOURCE.read_bytes()).hexdigest()[:16]


def _find_or_build() -> tuple[Path | None, str]:
    given = os.environ.get(ENV_HELPER, "").strip()
    if given:
        path = Path(given)
        if path.name != NAME or not os.access(path, os.X_OK):
            return None, f"{ENV_HELPER}={given} is not an executable named {NAME}"
        return path.parent, ""
    home = _built_home()
    if os.access(home / NAME, os.X_OK):
        return home, ""
    compiler = shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc")
    if compiler is None:
        return None, "no C compiler to build the warm-call helper (install gcc and libc6-dev)"
    home.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=".build-", dir=home.parent))
    try:
        binary = scratch / NAME
        done = subprocess.run(
            [compiler, "-static", "-Os", "-s", "-o", str(binary), str(SOURCE)],
            stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120,
        )
        if done.returncode != 0:
            last = (done.stderr.strip().splitlines() or ["no message"])[-1]
            return None, f"cannot build the warm-call helper with {compiler} -static ({last}); install libc6-dev"
        os.chmod(binary, 0o755)
        os.chmod(scratch, 0o755)  # the sandbox user must be able to reach it where it is bind-mounted
        try:
            scratch.rename(home)
        except OSError:  # another fnrun built it meanwhile
            pass
    except (OSError, subprocess.SubprocessError) as err:
        return None, f"cannot build the warm-call helper: {err}"
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return (home, "") if os.access(home / NAME, os.X_OK) else (None, f"cannot build the warm-call helper into {home}")
