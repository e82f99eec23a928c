"""/local of a warm container, changed per call from this machine.

A cold container bind-mounts the function config's directory read-only at /local. A warm one
bind-mounts, read-only, a directory of its own (its staging directory) once; before each call
whose function-config directory differs from the last one's, the staging directory is emptied
and the new directory's tree is hard-linked into it (copied where a link cannot be made), with
the modes it has. The function so sees the same names, contents, modes and owners, read-only,
as through the cold bind mount, and nothing of another call's directory.

Staging directories are named after their process (pid and start time), so the next fnrun can
remove those a killed one left (runtimes.container.orphans).
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from pathlib import Path

PREFIX = "fnrun-warm-local-"


def staging_root() -> Path:
    return Path(tempfile.gettempdir())


def make_staging(owner: str) -> Path:
    """A new, empty staging directory; `owner` is "PID-STARTED" of this process."""
    path = Path(tempfile.mkdtemp(prefix=f"{PREFIX}{owner}-", dir=staging_root()))
    os.chmod(path, 0o755)
    return path


def fill(staging: Path, source: Path) -> None:
    """Make `staging` hold exactly `source`'s tree (links or copies), with `source`'s mode."""
    empty(staging)
    for current, dirs, files in os.walk(source, followlinks=False):
        relative = Path(current).relative_to(source)
        target_dir = staging / relative
        for name in dirs:
            origin = Path(current) / name
            if origin.is_symlink():
                os.symlink(os.readlink(origin), target_dir / name)
            else:
                (target_dir / name).mkdir()
        for name in files:
            _place(Path(current) / name, target_dir / name)
    # directories' modes last: a read-only one must still have been writable while filled
    for current, dirs, _ in os.walk(source, followlinks=False):
        for name in dirs:
            origin = Path(current) / name
            if not origin.is_symlink():
                os.chmod(staging / origin.relative_to(source), stat.S_IMODE(origin.stat().st_mode))
    os.chmod(staging, stat.S_IMODE(source.stat().st_mode))


def _place(origin: Path, target: Path) -> None:
    info = origin.lstat()
    if stat.S_ISLNK(info.st_mode):
        os.symlink(os.readlink(origin), target)
    elif stat.S_ISREG(info.st_mode):
        try:
            os.link(origin, target)
        except OSError:  # another file system, or a file this user may not link
            shutil.copy2(origin, target)
    # sockets, fifos and devices: a bind mount would show them, but no function reads one


def empty(staging: Path) -> None:
    """Remove everything in `staging` (made writable first: a copied tree may be read-only)."""
    os.chmod(staging, 0o755)
    for current, dirs, _ in os.walk(staging):
        for name in dirs:
            path = Path(current) / name
            if not path.is_symlink():
                os.chmod(path, 0o755)
    for entry in os.scandir(staging):
        if entry.is_dir(follow_symlinks=False):
            shutil.rmtree(entry.path)
        else:
            os.unlink(entry.path)


def remove(staging: Path) -> None:
    try:
        empty(staging)
        staging.rmdir()
    except OSError:
        shutil.rmtree(staging, ignore_errors=True)
