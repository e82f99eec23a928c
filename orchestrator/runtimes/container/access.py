"""Can the sandbox user read what is bind-mounted for it?

A function runs as uid 65534 (or the caller's uid with --as-current-user). A bind mount keeps the
host's owners and modes, so a function config in a directory made by `mktemp -d` (mode 0700)
shows up at /local as a directory the function cannot open, and the function dies with a bare
`PermissionError: '/local'` deep inside its own code. The container runtime copies such a
directory in instead (orchestrator.runtimes.container.upload); a writable mount cannot be a copy, so for
it this check turns the failure into one line that says what to do, before any container starts.

The check reads plain mode bits (owner, group, other) as the kernel applies them to a process
with that uid and gid and no supplementary groups; root in the container's user namespace is
exempt. ACLs are not read, so an ACL that grants access is not seen: the error names the cure
(`chmod`) and `--as-current-user` for that case.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from orchestrator.errors import InputError

NOBODY_UID = NOBODY_GID = 65534


def _allows(info: os.stat_result, uid: int, gid: int, want: int) -> bool:
    """Whether mode bits grant `want` (a combination of 4=r, 2=w, 1=x) to uid:gid."""
    if uid == 0:
        return True
    if info.st_uid == uid:
        bits = (info.st_mode >> 6) & 7
    elif info.st_gid == gid:
        bits = (info.st_mode >> 3) & 7
    else:
        bits = info.st_mode & 7
    return bits & want == want


def blocked_by(path: Path, uid: int, gid: int) -> tuple[Path, str] | None:
    """Whether uid:gid could not read `path` (list it, for a directory) once bind-mounted, and the
    permission missing. The host's parent directories do not matter: the engine makes the mount."""
    path = path.resolve()
    info = path.stat()
    if stat.S_ISDIR(info.st_mode):
        return None if _allows(info, uid, gid, 5) else (path, "read and search (r-x)")
    return None if _allows(info, uid, gid, 4) else (path, "read (r)")


def check_readable(path: Path, target: str, function: str, as_current_user: bool) -> None:
    """Refuse to start a function that could not read `path`, bind-mounted for it at `target`."""
    uid, gid = (os.getuid(), os.getgid()) if as_current_user else (NOBODY_UID, NOBODY_GID)
    found = blocked_by(path, uid, gid)
    if found is None:
        return
    where, missing = found
    who = f"uid {uid}" if as_current_user else "the sandbox user (uid 65534)"
    mode = {"read and search (r-x)": "o+rx", "read (r)": "o+r"}[missing]
    hint = "" if as_current_user else ", or run with --as-current-user"
    raise InputError(
        f"function {function}: {path} (mounted at {target}) is not readable by {who}: "
        f"no {missing} permission on {where}; run `chmod {mode} {where}`{hint}"
    )
