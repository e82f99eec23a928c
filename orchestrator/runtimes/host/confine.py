"""What a builtin function's child process gets instead of a container.

Builtins are fnrun's own code, but they get what a container would withhold: the network, memory
beyond --memory, and writes to the machine's files.
- Memory: RLIMIT_DATA at --memory. Not RLIMIT_AS: the Go runtime inside starlark-go reserves
  gigabytes of address space it never touches (it aborts under a 768 MiB RLIMIT_AS), while
  RLIMIT_DATA counts only memory that can be written, and stops a runaway Go or Python alike.
- Network and writes: new namespaces (unshare): an empty network namespace (only a down loopback)
  and a mount namespace in which every mount is remounted read-only. As root directly; otherwise
  inside a new user namespace (unprivileged). The function's input arrives on stdin, its output
  leaves on stdout, and a Starlark script file is read by fnrun and passed on, so the child needs
  no write and no file of the user's it could not read.
- Where the kernel refuses the namespaces (unprivileged user namespaces disabled), the child keeps
  the host's network and file system, like an exec function; `available()` tells, `fnrun doctor`
  can report it.
"""

from __future__ import annotations

import ctypes
import os
import resource
from collections.abc import Callable

CLONE_NEWNS = 0x00020000
CLONE_NEWUSER = 0x10000000
CLONE_NEWNET = 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_NOATIME, MS_NODIRATIME, MS_RELATIME = 1024, 2048, 1 << 21
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 32, 4096, 16384, 1 << 18
# mount options a remount must keep (in a user namespace the kernel refuses to clear them)
_KEPT = {"nosuid": MS_NOSUID, "nodev": MS_NODEV, "noexec": MS_NOEXEC, "noatime": MS_NOATIME,
         "nodiratime": MS_NODIRATIME, "relatime": MS_RELATIME}

_libc = ctypes.CDLL(None, use_errno=True)


def mounts() -> list[tuple[bytes, int]]:
    """(mount point, flags to keep) of every mount, read before the fork (no I/O after it)."""
    found = []
    try:
        with open("/proc/self/mountinfo", "rb") as handle:
            for line in handle:
                fields = line.split()
                point = fields[4].decode().encode("latin-1").decode("unicode_escape").encode("latin-1")
                flags = sum(_KEPT.get(option, 0) for option in fields[5].decode().split(","))
                found.append((point, flags))
    except (OSError, IndexError, UnicodeError):
        return []
    return found


def isolate(points: list[tuple[bytes, int]]) -> bool:
    """Enter new network and mount namespaces and make every mount read-only; False where the
    kernel refuses the namespaces (then nothing changed)."""
    user = 0 if os.geteuid() == 0 else CLONE_NEWUSER
    if _libc.unshare(user | CLONE_NEWNS | CLONE_NEWNET) != 0:
        return False
    _libc.mount(None, b"/", None, MS_REC | MS_PRIVATE, None)  # nothing propagates back out
    for point, flags in points:
        _libc.mount(None, point, None, MS_REMOUNT | MS_BIND | MS_RDONLY | flags, None)
    return True


def confinement(memory: int) -> Callable[..., None]:
    """The pre-exec step for a builtin's child (runs after fork, before exec: no locks, no I/O).
    A child that does not exec (orchestrator.runtimes.host.forked) passes the data it inherited, which
    its limit comes on top of."""
    points = mounts()

    def confine(inherited: int = 0) -> None:
        resource.setrlimit(resource.RLIMIT_DATA, (memory + inherited, memory + inherited))
        isolate(points)

    return confine


def available() -> bool:
    """Whether this host gives a builtin's child its namespaces (checked in a throwaway child)."""
    points = mounts()
    pid = os.fork()
    if pid == 0:
        os._exit(0 if isolate(points) else 1)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status) == 0
