"""ResourceLists through pipes: `fnrun source` writes one in pieces as the package is read, and
`fnrun sink` reads one as it arrives, so both ends of `fnrun source A | fnrun sink B` work at
once (the sink decodes and stages files while the source still reads).

`fnrun source` reads a big package on two processes: a forked helper reads and encodes every
other batch of files while this process does the rest and writes everything out in file order.
Parsing YAML is CPU-bound and holds the GIL, so threads would not help."""

from __future__ import annotations

import codecs
import contextlib
import io
import itertools
import json
import os
import queue
import signal
import stat
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from ..errors import FnrunError, InputError
from ..read.notices import Note, warn
from ..read.package import package_files, read_path, require_directory
from . import resourcelist
from .fastlist import FAILURE_NOTE

META_FILES = ("Kptfile",)  # read as YAML though not *.yaml: `kpt fn source` lists a package's Kptfiles too
BATCH = 25  # files per batch handed out to a process
FORK_FROM = 4 * BATCH  # fewer files than this: one process (a fork costs more than it saves)


def source_chunks(root: Path | str, parallel: bool = True, notes: list[Note] | None = None, workers: int | None = None) -> Iterator[str]:
    """The package as a config.kubernetes.io/v1 ResourceList, in pieces, in file order; on two
    processes when `parallel` and the package is big. What the reader left out is added to
    `notes` (read.notices). `workers`: FNRUN_WORKERS as the edge read it, for each file's items."""
    notes = [] if notes is None else notes
    root = Path(root)
    require_directory(root)
    files = package_files(root, META_FILES)
    batches = [files[i : i + BATCH] for i in range(0, len(files), BATCH)]
    started = False
    for encoded in _encoded(root, batches, parallel, notes, workers):
        if encoded:
            if not started:
                yield resourcelist.HEADER + "items:\n"
                started = True
            yield encoded
    if not started:
        yield resourcelist.HEADER + "items: []\n"


def _encode(root: Path, batch: list[str], notes: list[Note], used: set[str], workers: int | None) -> str:
    """A batch's items; `used`, the anchor names items before them defined, gets theirs."""
    encoded = []
    for rel in batch:
        source, resources = read_path(root, rel, kustomizations=True)  # kustomization files too, as kpt lists them
        notes.extend(source.notes)
        encoded.append(resourcelist.encode_items(resources, used, workers))
    return "".join(encoded)


def _encoded(root: Path, batches: list[list[str]], parallel: bool, notes: list[Note], workers: int | None) -> Iterator[str]:
    """Each batch's items, in order: even batches encoded here, odd ones by a forked helper when
    the package is big, the machine has a second core, and forking is safe (no other threads).
    The helper cannot know the anchor names of the batches before each of its own: a batch of
    its whose names clash with an earlier one's is encoded again here (anchors are rare)."""
    used: set[str] = set()
    if not parallel or len(batches) * BATCH < FORK_FROM or (os.cpu_count() or 1) < 2 or not hasattr(os, "fork") or threading.active_count() > 1:
        for batch in batches:
            yield _encode(root, batch, notes, used, workers)
        return
    helper = _Helper(root, batches[1::2], workers)
    try:
        for index, batch in enumerate(batches):
            if index % 2 == 0:
                yield _encode(root, batch, notes, used, workers)
                continue
            encoded, names = helper.next(notes)
            if names & used:
                encoded = _encode(root, batch, [], used, workers)  # its notes came with the helper's
            used |= names
            yield encoded
    finally:
        helper.close()


class _Helper:
    """A forked process encoding batches and sending them back through a pipe as records
    `kind length\\n payload` (kind 0: items, 1: an input error's message, 2: anything else,
    3: the notes of the batch whose items come next, 4: the anchor names they define, as JSON)."""

    def __init__(self, root: Path, batches: list[list[str]], workers: int | None) -> None:
        read_end, write_end = os.pipe()
        self.pid = os.fork()
        if self.pid == 0:  # the helper: never returns
            os.close(read_end)
            _helper_main(root, batches, write_end, workers)
        os.close(write_end)
        self._records: queue.SimpleQueue[tuple[int, bytes]] = queue.SimpleQueue()
        self._reader = threading.Thread(target=self._read, args=(os.fdopen(read_end, "rb"),), daemon=True)
        self._reader.start()

    def _read(self, stream: IO[bytes]) -> None:
        """Drain the pipe on a thread, so the helper never waits for this process."""
        with stream:
            while header := stream.readline():
                kind, length = map(int, header.split())
                self._records.put((kind, stream.read(length)))
        self._records.put((2, b"the source helper process stopped early"))

    def next(self, notes: list[Note]) -> tuple[str, set[str]]:
        """The next batch's items and the anchor names they define."""
        names: set[str] = set()
        kind, payload = self._records.get()
        while kind in (3, 4):
            if kind == 3:
                notes.extend(Note(path, line, problem, resource) for path, line, problem, resource in json.loads(payload))
            else:
                names = set(json.loads(payload))
            kind, payload = self._records.get()
        if kind == 0:
            return payload.decode(), names
        if kind == 1:
            raise InputError(payload.decode())
        raise FnrunError(payload.decode(errors="replace"))

    def close(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(self.pid, 0)


def _helper_main(root: Path, batches: list[list[str]], fd: int, workers: int | None) -> None:
    """The forked helper: encode the batches, report the first error, exit without running the
    parent's cleanup (stdout goes to /dev/null: only the parent writes the list)."""
    code = 0
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1)
        with os.fdopen(fd, "wb") as out:
            for batch in batches:
                notes: list[Note] = []
                names: set[str] = set()
                try:
                    kind, payload = 0, _encode(root, batch, notes, names, workers).encode()
                except InputError as err:
                    kind, payload = 1, str(err).encode()
                except Exception as err:  # noqa: BLE001 - reported to the parent, which raises it
                    kind, payload = 2, f"source helper: {type(err).__name__}: {err}".encode()
                if notes and not kind:
                    noted = json.dumps([[n.path, n.line, n.problem, n.resource] for n in notes]).encode()
                    out.write(b"3 %d\n" % len(noted) + noted)
                if names and not kind:
                    named = json.dumps(sorted(names)).encode()
                    out.write(b"4 %d\n" % len(named) + named)
                out.write(b"%d %d\n" % (kind, len(payload)) + payload)
                if kind:
                    break
    except BaseException:  # noqa: BLE001 - a broken pipe or an interrupt: the parent decides
        code = 1
    finally:
        os._exit(code)


def write_source(root: Path | str, out: IO[str], flush_every: int = 1 << 18, fn_config: Path | None = None,
                 workers: int | None = None) -> None:
    """Write `source` to `out` as it is read. Should a file turn out bad after output began, a
    failure note (a reserved YAML indicator at column 0) ends the output, so that no consumer
    takes the truncated list for a whole package; the error is raised as usual. `fn_config`: a
    file whose one resource follows the items as the list's functionConfig (kpt's `source
    --fn-config`), read before anything is written, so a bad one prints nothing. `workers`:
    FNRUN_WORKERS as the edge read it.

    Into a pipe the package is read on one process: the reader at the other end (`fnrun sink`,
    a function) needs the second core more than this side does."""
    pending: list[str] = []
    size = 0
    began = False
    notes: list[Note] = []
    tail = _function_config(fn_config) if fn_config is not None else ""
    try:
        for chunk in itertools.chain(source_chunks(root, parallel=not _is_pipe(out), notes=notes, workers=workers), [tail]):
            pending.append(chunk)
            size += len(chunk)
            if size >= flush_every:
                out.write("".join(pending))
                out.flush()
                pending, size, began = [], 0, True
        out.write("".join(pending))
        out.flush()
        warn(notes)
    except FnrunError as err:
        if began:
            with contextlib.suppress(OSError):
                out.write(f"{FAILURE_NOTE}fnrun source failed: {err}\n")
        raise
    except BrokenPipeError:
        raise  # the reader went away: the command line's usual quiet exit
    except OSError as err:
        raise FnrunError(f"cannot write the ResourceList: {err.strerror}") from None


def _function_config(path: Path) -> str:
    """The `functionConfig:` field of a list, for the one resource in `path`."""
    from ..select.functions import config_file

    config, _ = config_file(None, path)
    return resourcelist.encode([], config).split("items: []\n", 1)[1]


def _is_pipe(out: IO[str]) -> bool:
    try:
        return stat.S_ISFIFO(os.fstat(out.fileno()).st_mode)
    except (OSError, ValueError, AttributeError, io.UnsupportedOperation):
        return False


def read_chunks(stream: IO[bytes], source_name: str = "stdin", size: int = 1 << 20) -> Iterator[str]:
    """A binary stream as UTF-8 text chunks as they arrive; invalid UTF-8 names its line.

    A thread reads ahead into memory, so the producer at the other end of a pipe never waits for
    this process to decode and write (the whole input is held anyway)."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    lines = offset = 0
    for raw in _read_ahead(stream, size):
        pending = len(decoder.getstate()[0])
        try:
            chunk = decoder.decode(raw, final=not raw)
        except UnicodeDecodeError as err:
            at = max(err.start - pending, 0)
            line = lines + raw[:at].count(b"\n") + 1
            raise InputError(f"{source_name}:{line}: invalid UTF-8 (byte {offset + at})") from None
        lines += raw.count(b"\n")
        offset += len(raw)
        if chunk:
            yield chunk


def _read_ahead(stream: IO[bytes], size: int) -> Iterator[bytes]:
    """The stream's blocks, read on a thread; the last block is b"" (end of input)."""
    blocks: queue.SimpleQueue[bytes | BaseException] = queue.SimpleQueue()
    read = getattr(stream, "read1", stream.read)

    def reader() -> None:
        try:
            while block := read(size):
                blocks.put(block)
            blocks.put(b"")
        except BaseException as err:  # noqa: BLE001 - re-raised in the consumer
            blocks.put(err)

    threading.Thread(target=reader, name="fnrun-stdin", daemon=True).start()
    while True:
        block = blocks.get()
        if isinstance(block, BaseException):
            raise block
        yield block
        if not block:
            return
