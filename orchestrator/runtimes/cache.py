"""A content-addressed cache of function results, so a re-run that changes nothing starts nothing.

The determinism assumption: a container function's output depends only on what fnrun gives it —
the image (by the ID the engine resolved, never the tag), its arguments and environment, the
sandbox it runs in, the exact ResourceList bytes on stdin, and the files it can read at /local. A
function that reads the clock, random numbers or anything else must be run with --no-cache or be
marked `dev.fnrun.cacheable=false` (an image label). Never cached: exec functions, functions with
network or mounts, runs under the `always` pull policy, and any run that did not exit 0.

An entry is one file `<dir>/v1/<key[:2]>/<key>`: a header line (the payload's SHA-256 and size),
then the payload (exit code, stderr and duration as JSON, a newline, the stdout bytes). It is
written to a temp file and renamed into place; a corrupt, partial or unreadable entry is a miss
and is removed. A hit refreshes the entry's mtime; after a store, entries are pruned oldest first
while the cache is over its size bound.

Only its owner can fill the cache. A replayed entry is written into the package as the function's
output, so an entry is trusted, as ssh trusts a key file, only when it and every directory from
the cache's root down to it belong to the user fnrun runs as and nobody else may write them (no
group or other write bit). Anything else is a miss, and the run says once why: another user's
entry in a shared FNRUN_CACHE_DIR, a group-writable directory, a symbolic link, a FIFO or device
(opened without following links and without blocking, then checked on the open descriptor, so
nothing can be swapped in between). Entries are written 0600 in 0700 directories: what a
function printed may be a Secret.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import stat
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from orchestrator.runtimes.protocol import Bytes, Invocation, RunOutput, Runtime, StderrSink, StdoutSink
from orchestrator.settings import DEFAULT_CACHE_SIZE

LABEL_CACHEABLE = "dev.fnrun.cacheable"
_VERSION = "v1"
# What never changes a successful run's output: how long it may take and how much it may say.
_SANDBOX_IGNORED = ("timeout", "image_pull_policy", "max_output")


@dataclass
class CacheInfo:
    location: Path
    entries: int
    size: int
    bound: int


class ResultCache:
    def __init__(self, root: Path, bound: int | None = None) -> None:
        """The cache in `root` (settings.cache_dir: FNRUN_CACHE_DIR, read at the edge)."""
        self.root = root / _VERSION
        self.bound = DEFAULT_CACHE_SIZE if bound is None else bound  # FNRUN_CACHE_SIZE, read at the edge
        self._top = str(self.root.parent)
        self._lock = threading.Lock()
        self._warned = False

    def key(self, inv: Invocation, image_id: str, stdin: bytes) -> str:
        """The entry's name: a digest of everything the output may depend on (module docstring)."""
        sandbox = {k: v for k, v in asdict(inv.sandbox).items() if k not in _SANDBOX_IGNORED}
        identity = {
            "image": image_id,
            "args": list(inv.args),
            "env": sorted(inv.env.items()),
            "sandbox": sandbox,
            "user": [os.getuid(), os.getgid()] if inv.sandbox.as_current_user else None,
            "local": _tree_digest(inv.local_dir) if inv.local_dir is not None else None,
        }
        digest = hashlib.sha256(json.dumps(identity, sort_keys=True, default=str).encode())
        digest.update(b"\0")
        digest.update(stdin)
        return digest.hexdigest()

    def has(self, key: str) -> bool:
        """A trusted entry exists (it may still turn out corrupt, which `get` then treats as a miss)."""
        fd = self._open(key)
        if fd is None:
            return False
        os.close(fd)
        return True

    def _path(self, key: str) -> Path:
        return self.root / key[:2] / key

    def get(self, key: str) -> RunOutput | None:
        fd = self._open(key)
        if fd is None:
            return None
        with os.fdopen(fd, "rb") as handle:
            output = _decode(handle.read())
            if output is not None:
                with contextlib.suppress(OSError):
                    os.utime(handle.fileno())  # least recently used goes first
        if output is None:
            with contextlib.suppress(OSError):
                self._path(key).unlink()  # ours (it was trusted): a partial write, a damaged disk
        return output

    def put(self, key: str, output: RunOutput) -> None:
        """Store a successful run; any failure to store is silent (the cache is an optimisation),
        and nothing is stored where it would not be trusted (module docstring)."""
        meta = json.dumps({"exit_code": output.exit_code, "stderr": output.stderr, "duration": output.duration}).encode()
        payload = meta + b"\n" + output.stdout
        header = json.dumps({"sha256": hashlib.sha256(payload).hexdigest(), "size": len(payload)}).encode()
        try:
            os.makedirs(self.root.parent, mode=0o700, exist_ok=True)
            shard = self._walk([self.root.name, key[:2]], create=True)
        except (OSError, _Distrusted) as err:
            if isinstance(err, _Distrusted):
                self._warn(err, "nothing is stored there")
            return
        import secrets  # here: only storing a result needs it

        temp = f".{key}.{os.getpid()}.{secrets.token_hex(4)}.tmp"
        try:
            fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600, dir_fd=shard)
            with os.fdopen(fd, "wb") as handle:
                handle.write(header + b"\n" + payload)
            os.replace(temp, key, src_dir_fd=shard, dst_dir_fd=shard)
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(temp, dir_fd=shard)
            return
        finally:
            os.close(shard)
        self.prune()

    def _open(self, key: str) -> int | None:
        """A read descriptor of the entry for `key` when it is trusted (module docstring), else
        None: absent, or distrusted (said once per cache)."""
        try:
            return self._walk([self.root.name, key[:2], key], create=False)
        except _Distrusted as err:
            self._warn(err, "its function runs")
        except OSError:
            pass
        return None

    def _walk(self, names: list[str], create: bool) -> int:
        """Open the cache's root, then each of `names` below it (the last one a file unless
        `create`), checking each on its descriptor; the last one's descriptor. `create`: every
        name is a directory, made 0700 when absent. Raises _Distrusted, or OSError (absent)."""
        fd = os.open(self._top, _DIRECTORY)  # the root itself may be a link: the user named it
        try:
            depth = 0
            why = _why(fd, directory=True)
            while why is None and depth < len(names):
                name = names[depth]
                depth += 1
                directory = create or depth < len(names)
                if create:
                    with contextlib.suppress(FileExistsError):
                        os.mkdir(name, 0o700, dir_fd=fd)
                try:
                    child = os.open(name, _SUBDIRECTORY if directory else _ENTRY, dir_fd=fd)
                except OSError as err:
                    if err.errno == errno.ENOENT:
                        raise
                    why = _kind(name, fd) if err.errno in (errno.ELOOP, errno.ENOTDIR) else err.strerror or "unreadable"
                    break
                os.close(fd)
                fd = child
                why = _why(fd, directory)
            if why is not None:
                raise _Distrusted(Path(self._top, *names[:depth]), why)
            return fd
        except BaseException:
            os.close(fd)
            raise

    def _warn(self, err: _Distrusted, outcome: str) -> None:
        """One line per cache (per run): the first reason an entry was not trusted."""
        with self._lock:
            if self._warned:
                return
            self._warned = True
        print(f"fnrun: warning: result cache: ignoring {err.path}: {err.why} (the cache trusts only "
              f"what the user running fnrun owns and alone may write); {outcome}", file=sys.stderr)

    def _entries(self) -> list[tuple[float, int, Path]]:
        found = []
        with contextlib.suppress(OSError):
            for shard in os.scandir(self.root):
                if not shard.is_dir():
                    continue
                for entry in os.scandir(shard.path):
                    with contextlib.suppress(OSError):
                        info = entry.stat(follow_symlinks=False)
                        found.append((info.st_mtime, info.st_size, Path(entry.path)))
        return found

    def prune(self, bound: int | None = None) -> int:
        """Remove least recently used entries until the cache fits `bound`; returns how many."""
        limit = self.bound if bound is None else bound
        entries = sorted(self._entries())
        total = sum(size for _, size, _ in entries)
        removed = 0
        for _, size, path in entries:
            if total <= limit:
                break
            with contextlib.suppress(OSError):
                path.unlink()
                removed += 1
            total -= size
        return removed

    def info(self) -> CacheInfo:
        entries = self._entries()
        return CacheInfo(self.root.parent, len(entries), sum(size for _, size, _ in entries), self.bound)


_DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
_SUBDIRECTORY = _DIRECTORY | os.O_NOFOLLOW
_ENTRY = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC  # a FIFO opens at once, and is then refused


class _Distrusted(Exception):
    """A cache file or directory fnrun will not take (module docstring), and why."""

    def __init__(self, path: Path, why: str) -> None:
        super().__init__(f"{path}: {why}")
        self.path = path
        self.why = why


def _why(fd: int, directory: bool) -> str | None:
    """Why the open file `fd` is not trusted, or None: it is a directory (or a regular file),
    owned by the user fnrun runs as, and no group or other may write it."""
    info = os.fstat(fd)
    kind = stat.S_IFDIR if directory else stat.S_IFREG
    if stat.S_IFMT(info.st_mode) == kind and info.st_uid == os.geteuid() and not info.st_mode & 0o022:
        return None
    if stat.S_IFMT(info.st_mode) != kind:
        return "not a directory" if directory else "not a regular file"
    if info.st_uid != os.geteuid():
        return f"owned by uid {info.st_uid}, not by uid {os.geteuid()}"
    who = " and ".join(w for bit, w in ((0o020, "group"), (0o002, "others")) if info.st_mode & bit)
    return f"writable by {who} (mode {stat.S_IMODE(info.st_mode):04o})"


def _kind(name: str, parent: int) -> str:
    """Why `name` (in the directory open as `parent`) could not be opened as wanted."""
    try:
        mode = os.lstat(name, dir_fd=parent).st_mode
    except OSError:
        return "not what was expected"
    return "a symbolic link" if stat.S_ISLNK(mode) else "not a directory" if not stat.S_ISDIR(mode) else "a directory"


def _decode(raw: bytes) -> RunOutput | None:
    """An entry's run, or None when anything about it is off (partial, corrupt, foreign)."""
    try:
        header_line, payload = raw.split(b"\n", 1)
        header = json.loads(header_line)
        if header.get("size") != len(payload) or header.get("sha256") != hashlib.sha256(payload).hexdigest():
            return None
        meta_line, stdout = payload.split(b"\n", 1)
        meta = json.loads(meta_line)
        return RunOutput(stdout=stdout, stderr=str(meta["stderr"]), exit_code=int(meta["exit_code"]), duration=float(meta["duration"]), cached=True)
    except (ValueError, KeyError, TypeError, AttributeError):
        return None


def _tree_digest(directory: Path) -> str:
    """What a function could read at /local, by name, size, mode and mtime (as make judges files)."""
    digest = hashlib.sha256()
    for current, dirs, files in os.walk(directory):
        dirs.sort()
        for name in sorted(files):
            path = os.path.join(current, name)
            with contextlib.suppress(OSError):
                info = os.lstat(path)
                digest.update(f"{os.path.relpath(path, directory)}\0{info.st_size}\0{info.st_mode}\0{info.st_mtime_ns}\n".encode())
    return digest.hexdigest()


class CachingRuntime(Bytes):
    """A container runtime with the cache in front: a hit replays the stored stderr and output
    without starting a container (nor calls `on_stdout`); a successful miss is stored. `connect`:
    the run's engine client, where an image must be asked through the SDK."""

    def __init__(self, inner: Runtime, cache: ResultCache, connect: Callable[[], Any] | None = None) -> None:
        self.inner = inner
        self.cache = cache
        self.connect = connect
        self.streams_stdout = inner.streams_stdout  # a miss streams as the inner runtime does

    def run(self, invocation: Invocation, stdin: bytes, on_stderr: StderrSink | None = None,
            on_stdout: StdoutSink | None = None) -> RunOutput:
        started = time.monotonic()
        key = self._key(invocation, stdin)
        if key is not None:
            hit = self.cache.get(key)
            if hit is not None:
                if on_stderr is not None:
                    for line in hit.stderr.splitlines():
                        on_stderr(line)
                return replace(hit, duration=time.monotonic() - started)
        output = self.inner.run(invocation, stdin, on_stderr, on_stdout)
        if key is not None and output.exit_code == 0:
            self.cache.put(key, output)
        return output

    def would_run(self, invocation: Invocation, stdin: bytes) -> bool:
        """Whether this run would start a container (no cached result): the pre-start asks."""
        key = self._key(invocation, stdin)
        return key is None or not self.cache.has(key)

    def _key(self, inv: Invocation, stdin: bytes) -> str | None:
        """None when this run must not be cached (module docstring), or the image is not here."""
        if inv.image is None or inv.exec_path is not None or inv.mounts or inv.sandbox.image_pull_policy == "always":
            return None
        if inv.sandbox.network and inv.network is not False:
            return None
        image_id, labels = _image_identity(inv.image, self.connect)
        if image_id is None or str(labels.get(LABEL_CACHEABLE, "true")).lower() == "false":
            return None
        return self.cache.key(inv, image_id, stdin)


def _image_identity(image: str, connect: Callable[[], Any] | None) -> tuple[str | None, dict]:
    """The engine's ID for the image as present locally (never the tag), and its labels."""
    from orchestrator.runtimes.container.inspect import inspect_image

    info = inspect_image(image, connect)
    if info is None:
        return None, {}
    return info.get("Id"), (info.get("Config") or {}).get("Labels") or {}
