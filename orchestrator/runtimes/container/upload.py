"""A read-only copy of a host directory for a function a bind mount would not serve.

Two cases need one: a remote engine, whose bind mounts name paths on its own machine
(orchestrator.runtimes.container.remote), and a directory the sandbox user cannot read. For the second: when the sandbox user cannot read the function config's directory (a package under a 0700 home
directory, or in a `mktemp -d`), bind-mounting it at /local would hand the function a directory it
cannot open. Loosening the host's modes or running the function as the caller would weaken the
sandbox; instead the directory is copied into an anonymous volume of the container (created with
it, removed with it) before the function starts. The copy belongs to root with modes r-x/r--, so
the function, which has no capabilities, can read it and cannot change it, exactly as with the
read-only bind mount; the host's files are not touched.
"""

from __future__ import annotations

import io
import os
import stat
import tarfile
from pathlib import Path

from orchestrator.errors import InputError

#: The most a copy may hold. /local is the function config's directory, sometimes a whole package;
#: past this the user is better served by making the directory readable.
MAX_COPY_BYTES = 256 * 1024 * 1024


def archive(
    directory: Path, target: str, function: str, limit: int = MAX_COPY_BYTES, remedy: str = "make it readable (chmod o+rx)"
) -> bytes:
    """The directory tree as an uncompressed tar for the engine's archive API: root-owned, every
    directory r-x, every file r-- (r-x where the host file is executable), symlinks as links.
    `remedy` ends the error for a tree over `limit`: what else the user can do."""
    buffer = io.BytesIO()
    total = 0
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for path in _walk(directory, target, function):
            relative = path.relative_to(directory).as_posix()
            info = tar.gettarinfo(str(path), arcname=relative)
            info.uid = info.gid = 0
            info.uname = info.gname = "root"
            info.mtime = int(info.mtime)
            if info.isdir():
                info.mode = 0o555
                tar.addfile(info)
            elif info.isreg():
                total += info.size
                if total > limit:
                    raise InputError(
                        f"function {function}: {directory} is too big (over {limit // (1024 * 1024)} MiB) "
                        f"to copy to {target}; {remedy}"
                    )
                info.mode = 0o555 if info.mode & 0o111 else 0o444
                with path.open("rb") as handle:
                    tar.addfile(info, handle)
            elif info.issym():
                tar.addfile(info)
            # sockets, fifos and devices have no place in a copy
    return buffer.getvalue()


def _walk(directory: Path, target: str, function: str) -> list[Path]:
    """The tree below `directory` (itself included as "."), parents before children."""
    found = [directory]
    try:
        for current, dirs, files in os.walk(directory, followlinks=False):
            dirs.sort()
            base = Path(current)
            found.extend(base / name for name in sorted(dirs))
            found.extend(base / name for name in sorted(files))
    except OSError as err:
        raise InputError(f"function {function}: cannot copy {directory} to {target}: {err.strerror or err}") from None
    for path in found:
        info = path.lstat()
        if stat.S_ISREG(info.st_mode) and not os.access(path, os.R_OK):
            raise InputError(f"function {function}: cannot copy {directory} to {target}: {path} is not readable")
    return found
