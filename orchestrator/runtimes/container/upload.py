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
from orchestrator.runtimes.container.access import NOBODY_GID, NOBODY_UID, blocked_by, check_readable
from orchestrator.runtimes.container.remote import uploads
from orchestrator.runtimes.container.settings import existing
from orchestrator.runtimes.protocol import Invocation, Mount

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


def copies_of(inv: Invocation) -> dict[str, Path]:
    """Container paths copied in (orchestrator.runtimes.container.upload) instead of bind-mounted: all of
    them for a remote engine (--mounts upload), else those the sandbox user could not read. A
    writable mount cannot be a copy: refused, with what would make it work."""
    everything = uploads(inv.sandbox.mount_mode)
    uid, gid = (os.getuid(), os.getgid()) if inv.sandbox.as_current_user else (NOBODY_UID, NOBODY_GID)
    copies: dict[str, Path] = {}
    if inv.local_dir is not None and (everything or blocked_by(existing(inv.local_dir, inv), uid, gid)):
        copies["/local"] = existing(inv.local_dir, inv)
    for mount in inv.mounts:
        source = existing(mount.source, inv)
        if everything:
            _check_uploadable(inv, mount, source)
        elif not blocked_by(source, uid, gid):
            continue
        elif not mount.read_only or not source.is_dir():
            check_readable(source, mount.target, inv.name, inv.sandbox.as_current_user)
        copies[mount.target] = source
    return copies


def _check_uploadable(inv: Invocation, mount: Mount, source: Path) -> None:
    why = "the engine is remote" if inv.sandbox.mount_mode == "auto" else "--mounts upload"
    if not mount.read_only:
        raise InputError(
            f"function {inv.name}: writable mount {mount.source} at {mount.target} cannot be uploaded ({why}): "
            f"what the function writes would not come back; mount it read-only, or use --mounts bind on the engine's machine"
        )
    if not source.is_dir():
        raise InputError(f"function {inv.name}: mount source {mount.source} is a file; an uploaded mount ({why}) must be a directory")
