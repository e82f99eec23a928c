"""All-or-nothing across files, and no lost updates: the last step of every write.

Staged files are renamed into place one by one; a SIGKILL or a power loss between two renames
would leave a package half new, half old. So before the first rename, the list of renames and
deletions is written to `.fnrun-journal` in the package root (complete, checksummed, fsynced,
then renamed into place: it exists only whole). It is removed after the last rename has reached
the disk. Any later fnrun command that reads the package and finds it finishes the write (every
staged file it lists was flushed before the journal was written, so going forward is always
possible) and says so; temp files of a write that died before its journal are removed.

Two fnrun processes (two pre-commit hooks, an editor and a terminal) may read the same package,
compute, and write. The write holds an exclusive lock on the package root directory (flock, so
no lock file is left behind and a dead holder releases it) while it checks that every file it is
about to replace or delete still holds the bytes it read, and that nothing appeared where it will
create one; otherwise nothing is written and the one-line error names the file. A second writer
waits for the first to finish its renames (a message says so), then finds its input stale.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

from .. import procstat, stops
from ..errors import FnrunError

JOURNAL = ".fnrun-journal"
TEMP_SUFFIX = ".fnrun-tmp"  # staged files: `.<name>.<pid>-<serial>.fnrun-tmp` beside their target
MANY_DIRECTORIES = 16  # past this many touched directories, one syncfs beats an fsync each


class StaleInput(FnrunError):
    """A file changed on disk between fnrun reading it and writing it back (exit 1: run again)."""

    exit_code = 1


@contextlib.contextmanager
def package_lock(root: Path) -> Iterator[None]:
    """Exclusive lock on the package root for the check-and-rename of a write (and a recovery)."""
    try:
        fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except FileNotFoundError:  # a sink into a directory that does not exist yet: nobody to race
        yield
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            print(f"fnrun: another fnrun is writing {root}; waiting for it", file=sys.stderr, flush=True)
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the lock


def check_unchanged(root: Path, expected: Iterable[tuple[str, bytes | None]]) -> None:
    """Every (path, bytes read) still holds those bytes; None: the path must still not exist."""
    for path, old in expected:
        try:
            current: bytes | None = (root / path).read_bytes()
        except FileNotFoundError:
            current = None
        except OSError:
            continue  # the write itself will report what is wrong with it
        if current != old:
            what = "appeared" if old is None else ("was deleted" if current is None else "changed")
            raise StaleInput(
                f"{path} {what} on disk after fnrun read it (another fnrun, an editor?); nothing was written: run again"
            )


def begin(root: Path, renames: list[tuple[Path, Path]], deletions: list[str]) -> Path:
    """Write the journal of a commit whose staged files are already flushed; returns its path."""
    body = json.dumps(
        {
            "pid": os.getpid(),
            "renames": [[str(temp.relative_to(root)), str(target.relative_to(root))] for temp, target in renames],
            "deletions": list(deletions),
        }
    )
    import hashlib  # here and in _read: a run that writes nothing never hashes a journal

    text = f"{body}\n{hashlib.sha256(body.encode()).hexdigest()}\n"
    journal = root / JOURNAL
    temp = root / f"{JOURNAL}.{os.getpid()}{TEMP_SUFFIX}"
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
    try:
        try:
            data = memoryview(text.encode())
            while data:
                data = data[os.write(fd, data) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temp, journal)
    except BaseException:  # a full disk: no half journal left beside the package
        with contextlib.suppress(OSError):
            temp.unlink()
        raise
    _fsync_dir(root)
    return journal


def end(root: Path, journal: Path, touched: Iterable[Path]) -> None:
    """The renames and deletions are done: make them durable, then drop the journal."""
    directories = {path.parent for path in touched}
    if len(directories) <= MANY_DIRECTORIES or not syncfs(root):
        for directory in directories:
            with contextlib.suppress(OSError):
                _fsync_dir(directory)
    journal.unlink(missing_ok=True)
    _fsync_dir(root)


def apply_entries(root: Path, renames: list[tuple[Path, Path]], deletions: Iterable[str]) -> None:
    """The renames (a temp already gone was renamed before) and deletions: safe to repeat."""
    for temp, target in renames:
        with contextlib.suppress(FileNotFoundError):
            os.replace(temp, target)
    for path in deletions:
        (root / path).unlink(missing_ok=True)


def recover(root: Path) -> None:
    """Finish a write that was cut off (its journal is still there), then say so."""
    journal = root / JOURNAL
    if not journal.exists():
        return
    with package_lock(root):
        if not journal.exists():  # its writer was alive and has finished
            return
        entries = _read(journal)
        if entries is None:  # cannot happen short of disk corruption: it is renamed in whole
            journal.unlink(missing_ok=True)
            print(f"fnrun: removed an unreadable write journal in {root}", file=sys.stderr)
            return
        renames = [(root / temp, root / target) for temp, target in entries["renames"]]
        apply_entries(root, renames, entries["deletions"])
        end(root, journal, [target for _, target in renames] + [root / p for p in entries["deletions"]])
    count = len(renames) + len(entries["deletions"])
    print(f"fnrun: {root}: finished a write that was interrupted ({count} file(s), fnrun pid {entries['pid']})", file=sys.stderr)


def remove_strays(paths: Iterable[str]) -> None:
    """Temp files of writes that died before their journal (their process is gone)."""
    for path in paths:
        pid = _pid_of(os.path.basename(path))
        if pid is not None and pid != os.getpid() and _alive(pid):
            continue  # another fnrun is staging right now
        with contextlib.suppress(OSError):
            os.unlink(path)


def _read(journal: Path) -> dict | None:
    import hashlib

    try:
        body, digest = journal.read_text().split("\n")[:2]
        if hashlib.sha256(body.encode()).hexdigest() != digest:
            return None
        return json.loads(body)
    except (OSError, ValueError):
        return None


def _pid_of(name: str) -> int | None:
    """`.web.yaml.1234-7.fnrun-tmp` -> 1234; `.fnrun-journal.1234.fnrun-tmp` -> 1234."""
    stem = name[: -len(TEMP_SUFFIX)]
    token = stem.rsplit(".", 1)[-1].split("-", 1)[0]
    return int(token) if token.isdigit() else None


def _alive(pid: int) -> bool:
    """Running (a zombie no init has reaped yet does not count: it stages nothing)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    stat = procstat.read(pid)
    return stat is None or procstat.running(stat)  # None: no /proc to ask; kill(0) found it


def syncfs(root: Path) -> bool:
    """One syncfs(2) for the filesystem holding root, where Linux offers it: a package of
    thousands of files in as many directories would otherwise cost thousands of fsyncs."""
    import ctypes  # only a write that lands loads ctypes

    try:
        syncfs_call = ctypes.CDLL(None, use_errno=True).syncfs
    except (OSError, AttributeError):
        return False
    fd = os.open(root, os.O_RDONLY)
    try:
        return syncfs_call(fd) == 0
    finally:
        os.close(fd)


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@contextlib.contextmanager
def signals_held() -> Iterator[None]:
    """SIGINT and SIGTERM wait while a commit lands, then act (orchestrator.stops.held): a stop that
    cut the journal's own write or the renames short would leave a half-new package (or a stray
    temp) until the next read. The commit is short (flush, journal, renames), so a stop is late by
    milliseconds; one that waited for a commit that landed says so (the CLI must not claim that
    nothing was written)."""
    with stops.held() as hold:
        stops.raise_if_asked()  # a stop whose exception the interpreter dropped
        yield
        hold.written = True
