"""Putting new file contents in place atomically and all together.

Every file is first staged: written to a hidden temp file beside its target (with the target's
mode bits), as soon as its content is known, so a sink can stage files while it still decodes.
Only when everything is staged are the temp files flushed to disk and renamed over their targets;
any error before that removes what was staged, and the directories made for it, so the package is
as it was."""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import threading
from collections.abc import Iterable
from pathlib import Path

from ..errors import EnvironmentProblem, FnrunError, InputError
from . import journal

#: Errors of the file system itself, not of the package: fix the machine (exit 4), not the files.
_ENVIRONMENT = frozenset({errno.EROFS, errno.ENOSPC, errno.EDQUOT, errno.EIO, errno.EMFILE, errno.ENFILE, errno.ENOMEM})


class Stager:
    """Stages (path, content) pairs as they are submitted; `commit` lands them, `rollback`
    removes them. A path staged again replaces its earlier temp file.

    Staging runs on the caller's thread: a sink interleaves it with decoding, and a second thread
    would cost more in GIL hand-offs than the file system calls it could overlap."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.temps: dict[str, Path] = {}
        self.made: list[Path] = []
        self._known: set[Path] = set()
        self._fresh: set[Path] = set()  # directories made here: nothing in them exists yet
        self._unclaimed: set[Path] = set()  # temps named but not yet in `temps`: an interrupt
        # between a temp's creation and its record must not leave it behind
        umask = os.umask(0)
        os.umask(umask)
        self._new_mode = 0o666 & ~umask
        self._serial = 0

    def submit(self, path: str, content: bytes | None) -> None:
        """Stage `content` for `path`; None drops what was staged for it. Errors roll back."""
        try:
            old = self.temps.pop(path, None)
            if old is not None:
                old.unlink(missing_ok=True)
            if content is not None:
                self.temps[path] = temp = self._stage(self.root / path, content)
                self._unclaimed.discard(temp)
        except OSError as err:
            self.rollback()
            raise write_failure(err, self.root / path) from None

    def _stage(self, target: Path, content: bytes) -> Path:
        """The new content in a temp file beside the target, with the target's mode bits (a new
        file's follow the umask, as if it had been created directly)."""
        parent = target.parent
        if parent not in self._known:
            self._fresh.update(_make_directory(parent, self.made))
            self._known.add(parent)
        mode = None
        if parent not in self._fresh:
            with contextlib.suppress(FileNotFoundError):
                mode = target.stat().st_mode & 0o7777
        while True:
            self._serial += 1
            temp = parent / f".{target.name}.{os.getpid()}-{self._serial}{journal.TEMP_SUFFIX}"
            self._unclaimed.add(temp)
            try:
                fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, self._new_mode if mode is None else 0o600)
                break
            except FileExistsError:  # not ours: it must not be removed
                self._unclaimed.discard(temp)
                continue
        try:
            if mode is not None:
                os.fchmod(fd, mode)
            view = memoryview(content)
            while view:
                view = view[os.write(fd, view) :]
        except BaseException:
            os.close(fd)
            with contextlib.suppress(OSError):
                temp.unlink(missing_ok=True)
            raise
        os.close(fd)
        return temp

    def commit(self, deletions: Iterable[str] = ()) -> None:
        """Land everything staged: flush, journal, rename over the targets, delete `deletions`,
        drop the journal (orchestrator.write.journal: a cut-off commit is finished by the next read)."""
        renames = [(temp, self.root / path) for path, temp in self.temps.items()]
        deletions = list(deletions)
        if not renames and not deletions:
            return
        try:
            _flush([temp for temp, _ in renames], self.root)
            log = journal.begin(self.root, renames, deletions)
        except OSError as err:
            self.rollback()
            raise write_failure(err, self.root) from None
        journal.apply_entries(self.root, renames, deletions)
        self.temps.clear()
        journal.end(self.root, log, [target for _, target in renames] + [self.root / path for path in deletions])

    def discard(self) -> None:
        """Forget every staged file (the caller starts over); directories stay until rollback.
        A temp that cannot be removed is left to the next read's sweep (journal.remove_strays):
        an unlink on a file system that refused the write refuses too, and must not hide why."""
        for temp in [*self.temps.values(), *self._unclaimed]:
            with contextlib.suppress(OSError):
                temp.unlink(missing_ok=True)
        self.temps.clear()
        self._unclaimed.clear()

    def rollback(self) -> None:
        """Remove every staged file and every directory made for them."""
        self.discard()
        for directory in reversed(self.made):
            with contextlib.suppress(OSError):
                directory.rmdir()
        self.made.clear()
        self._known.clear()
        self._fresh.clear()


def write_failure(err: OSError, target: Path) -> FnrunError:
    """One line for a write the file system refused: a read-only or full file system, a quota or
    an I/O error is the machine's (exit 4); anything else (a permission, a name) the package's."""
    kind = EnvironmentProblem if err.errno in _ENVIRONMENT else InputError
    return kind(f"cannot write {target}: {err.strerror or err}; nothing was written")


def _make_directory(directory: Path, made: list[Path]) -> list[Path]:
    """mkdir -p that records what it created (outermost first), for the rollback; returns the
    directories it made."""
    missing = []
    while not directory.is_dir():
        missing.append(directory)
        directory = directory.parent
    for path in reversed(missing):
        path.mkdir()
        made.append(path)
    return missing


def _flush(files: list[Path], root: Path) -> None:
    """Make staged files durable before any rename: one syncfs(2) for the package's filesystem
    where Linux offers it (2,000 fsyncs cost seconds), else an fsync per file on a few threads."""
    if not files:
        return
    if journal.syncfs(root):
        return

    def fsync(path: Path) -> None:
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)

    from concurrent.futures import ThreadPoolExecutor  # with logging: only where syncfs is missing

    with ThreadPoolExecutor(max_workers=min(16, len(files))) as pool:
        list(pool.map(fsync, files))


class ForkedStager:
    """A `Stager` in a forked helper process, for sinks: staging is file system calls (about a
    quarter of a millisecond per mkdir or create here), and in a helper they run on the other
    core while this process keeps decoding. Same interface as `Stager`; errors come back at
    `commit`. If this process dies, the helper sees its pipe close and rolls back."""

    def __init__(self, root: Path) -> None:
        commands_read, commands_write = os.pipe()
        replies_read, replies_write = os.pipe()
        with contextlib.suppress(OSError, AttributeError):
            fcntl.fcntl(commands_write, fcntl.F_SETPIPE_SZ, 1 << 20)  # let this side run ahead
        self.pid = os.fork()
        if self.pid == 0:
            os.close(commands_write)
            os.close(replies_read)
            _serve(root, commands_read, replies_write)
        os.close(commands_read)
        os.close(replies_write)
        self._commands = commands_write
        self._replies = os.fdopen(replies_read, "rb")
        self._open = True

    def _send(self, op: bytes, *payloads: bytes) -> None:
        data = b" ".join([op, *(b"%d" % len(p) for p in payloads)]) + b"\n" + b"".join(payloads)
        view = memoryview(data)
        try:
            while view:
                view = view[os.write(self._commands, view) :]
        except OSError:
            raise InputError("cannot write the package: the staging helper process stopped") from None

    def submit(self, path: str, content: bytes | None) -> None:
        if content is None:
            self._send(b"D", path.encode())
        else:
            self._send(b"S", path.encode(), content)

    def discard(self) -> None:
        self._send(b"X")

    def commit(self, deletions: Iterable[str] = ()) -> None:
        self._send(b"C", *(path.encode() for path in deletions))
        self._finish()

    def rollback(self) -> None:
        if self._open:
            with contextlib.suppress(InputError):
                self._send(b"R")
            with contextlib.suppress(InputError):
                self._finish()

    def _finish(self) -> None:
        """The helper's reply to commit or rollback; it exits after either."""
        self._open = False
        try:
            reply = self._replies.readline()
            message = self._replies.read(int(reply.split()[1])).decode() if reply.startswith(b"ERR") else ""
            environment = reply.split()[2:] == [b"%d" % EnvironmentProblem.exit_code]
        finally:
            self._replies.close()
            os.close(self._commands)
            with contextlib.suppress(ChildProcessError):
                os.waitpid(self.pid, 0)
        if not reply.startswith(b"OK"):
            raise (EnvironmentProblem if environment else InputError)(message or "cannot write the package: the staging helper stopped")


def _serve(root: Path, commands_fd: int, replies_fd: int) -> None:
    """The helper: stage what the parent sends, commit or roll back when told, then exit without
    running the parent's cleanup. A closed command pipe (the parent died) means roll back."""
    code = 0
    stager: Stager | None = None
    try:
        null = os.open(os.devnull, os.O_RDWR)
        os.dup2(null, 0)
        os.dup2(null, 1)
        stager = Stager(root)
        error: FnrunError | None = None
        with os.fdopen(commands_fd, "rb") as commands, os.fdopen(replies_fd, "wb") as replies:
            while header := commands.readline():
                op, *sizes = header.split()
                payloads = [commands.read(int(size)) for size in sizes]
                if op in (b"S", b"D") and error is None:
                    try:
                        stager.submit(payloads[0].decode(), payloads[1] if op == b"S" else None)
                    except FnrunError as err:  # the stager rolled back already
                        error = err
                elif op == b"X":
                    stager.discard()
                elif op == b"C":
                    if error is None:
                        try:
                            stager.commit([p.decode() for p in payloads])
                        except FnrunError as err:
                            error = err
                    replies.write(b"OK\n" if error is None else _error_reply(error))
                    return
                elif op == b"R":
                    stager.rollback()
                    replies.write(b"OK\n")
                    return
        stager.rollback()
    except BaseException:  # noqa: BLE001 - interrupted or the parent is gone: undo, then exit
        code = 1
        if stager is not None:
            with contextlib.suppress(BaseException):
                stager.rollback()
    finally:
        os._exit(code)


def _error_reply(error: FnrunError) -> bytes:
    """`ERR <message length> <exit code>` and the message: the parent raises the same kind."""
    message = str(error).encode()
    return b"ERR %d %d\n%s" % (len(message), error.exit_code, message)


def stager_for(root: Path, streaming: bool) -> Stager | ForkedStager:
    """A forked stager for a streaming sink on a machine with a second core, when forking is
    safe (no other threads yet); the in-process one otherwise."""
    if streaming and hasattr(os, "fork") and (os.cpu_count() or 1) > 1 and threading.active_count() == 1:
        return ForkedStager(root)
    return Stager(root)
