"""warmleak: a hostile function that tries to carry one call's input to the next call.

At import, in whatever process imports it first, it opens one channel of each kind a process
hands down to what it forks, and keeps them on the `sys` module (which a module run again as
__main__ in a forked child still finds): a memfd; a socketpair; a pipe whose reading end a thread
of the importing process empties into its own memory; a child process that echoes back into a
socket the importing process holds; an anonymous MAP_SHARED mapping; MAP_SHARED mappings of files
in /dev/shm and /tmp; an attached System V shared memory segment. Each call reads what an earlier
call left in each channel, writes the `stringData` of every Secret it was given into each, and adds
a ConfigMap `warmleak` whose data holds, per channel, what it found (empty: nothing came through),
`opened`: the channels it had, and `parent`: its parent's command line. It writes `warmleak: ran` to stderr.

With functionConfig data `zombie: "true"` it also leaves a zombie through clone(CLONE_PARENT): a
process that ends at once, whose parent is the call's own parent (the container's PID 1, or the
fork server that forked the call), so only that parent can reap it.
"""

from __future__ import annotations

import ctypes
import mmap
import os
import socket
import sys
import threading

from ruamel.yaml.comments import CommentedMap

from functions import sdk

SIZE = 4096


class Region:
    """A shared memory region: what it holds is NUL-padded text."""

    def __init__(self, address: int) -> None:
        self.address = address

    def read(self) -> bytes:
        return ctypes.string_at(self.address, SIZE).split(b"\0", 1)[0]

    def write(self, data: bytes) -> None:
        ctypes.memmove(self.address, data[: SIZE - 1] + b"\0", min(len(data), SIZE - 1) + 1)


def mapped(fd: int) -> Region:
    os.ftruncate(fd, SIZE)
    area = mmap.mmap(fd, SIZE, flags=mmap.MAP_SHARED)
    _keep.append(area)
    return Region(ctypes.addressof(ctypes.c_char.from_buffer(area)))


_keep: list[object] = []


def drain(sock: socket.socket) -> bytes:
    found = b""
    while True:
        try:
            more = sock.recv(65536)
        except BlockingIOError:
            return found
        if not more:
            return found
        found += more


class Memfd:
    def __init__(self) -> None:
        self.fd = os.memfd_create("warmleak")

    def read(self) -> bytes:
        return os.pread(self.fd, SIZE, 0).split(b"\0", 1)[0]

    def write(self, data: bytes) -> None:
        os.pwrite(self.fd, data + b"\0", 0)


class Socketpair:
    def __init__(self) -> None:
        self.ours, self.theirs = socket.socketpair()
        self.theirs.setblocking(False)

    def read(self) -> bytes:
        return drain(self.theirs)

    def write(self, data: bytes) -> None:
        self.ours.send(data)


class Thread:
    """A pipe the importing process's own thread reads into its memory."""

    def __init__(self) -> None:
        self.held = b""
        self.reader, self.writer = os.pipe()
        threading.Thread(target=self._hold, daemon=True).start()

    def _hold(self) -> None:
        while True:
            self.held = os.read(self.reader, SIZE)

    def read(self) -> bytes:
        return self.held

    def write(self, data: bytes) -> None:
        os.write(self.writer, data)


class Child:
    """A process that sends back what it gets, into a socket the importing process holds."""

    def __init__(self) -> None:
        self.ours, theirs = socket.socketpair()
        middle = os.fork()
        if middle == 0:  # forked twice: its parent is then the container's PID 1, which reaps it
            try:
                if os.fork() == 0:
                    self.ours.close()
                    while got := theirs.recv(SIZE):
                        theirs.send(got)
            finally:
                os._exit(0)
        os.waitpid(middle, 0)
        theirs.close()

    def read(self) -> bytes:
        self.ours.setblocking(False)
        try:
            return drain(self.ours)
        finally:
            self.ours.setblocking(True)

    def write(self, data: bytes) -> None:
        self.ours.send(data)


def sysv() -> Region:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.shmat.restype = ctypes.c_void_p
    segment = libc.shmget(0, SIZE, 0o600 | 0o1000)  # IPC_PRIVATE, IPC_CREAT
    if segment < 0:
        raise OSError(ctypes.get_errno(), "shmget")
    address = libc.shmat(segment, None, 0)
    if address in (None, ctypes.c_void_p(-1).value):
        raise OSError(ctypes.get_errno(), "shmat")
    return Region(address)


def file_region(directory: str) -> Region:
    fd = os.open(os.path.join(directory, f"warmleak-{os.getpid()}"), os.O_RDWR | os.O_CREAT, 0o600)
    return mapped(fd)


def open_channels() -> dict[str, object]:
    makers = {
        "memfd": Memfd,
        "socketpair": Socketpair,
        "thread": Thread,
        "child": Child,
        "sharedAnonymous": lambda: Region(anonymous()),
        "sharedFileDevShm": lambda: file_region("/dev/shm"),
        "sharedFileTmp": lambda: file_region("/tmp"),
        "sysvShm": sysv,
    }
    opened = {}
    for name, make in makers.items():
        try:
            opened[name] = make()
        except OSError:
            continue
    return opened


def anonymous() -> int:
    area = mmap.mmap(-1, SIZE, flags=mmap.MAP_SHARED)
    _keep.append(area)
    return ctypes.addressof(ctypes.c_char.from_buffer(area))


if not hasattr(sys, "warmleak_channels"):
    sys.warmleak_channels = open_channels()  # type: ignore[attr-defined]


def zombie() -> None:
    """clone(CLONE_PARENT) (x86_64 and aarch64 system call numbers); the child ends at once."""
    libc = ctypes.CDLL(None, use_errno=True)
    number = {"x86_64": 56, "aarch64": 220}[os.uname().machine]
    pid = libc.syscall(number, ctypes.c_ulong(0x00008000), None, None, None, None)
    if pid == 0:
        os._exit(0)


def leak(resources: sdk.ResourceList) -> None:
    print("warmleak: ran", file=sys.stderr, flush=True)
    config = resources.function_config
    data = (config.get("data") or {}) if config is not None else {}
    mine = ",".join(str(value) for item in resources.items if item.get("kind") == "Secret"
                    for value in (item.get("stringData") or {}).values()).encode()
    channels: dict[str, object] = sys.warmleak_channels  # type: ignore[attr-defined]
    found = CommentedMap()
    for name, channel in channels.items():
        found[name] = channel.read().decode("utf-8", "replace")  # type: ignore[attr-defined]
        try:
            channel.write(mine)  # type: ignore[attr-defined]
        except OSError:  # its other end is gone (a process killed since)
            pass
    found["opened"] = ",".join(channels)
    try:
        found["parent"] = open(f"/proc/{os.getppid()}/cmdline", "rb").read().replace(b"\0", b" ").decode().strip()
    except OSError:
        found["parent"] = "<none>"
    if str(data.get("zombie")) == "true":
        zombie()
    resources.items.append(sdk.Resource(CommentedMap(apiVersion="v1", kind="ConfigMap",
                                                     metadata=CommentedMap(name="warmleak"), data=found)))


if __name__ == "__main__":
    sdk.main(leak)
