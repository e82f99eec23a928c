"""Write resources back to a package: the one write-back `run`, `sink` and `merge` share.

Plan first, then write: every target path is validated and every file's new bytes computed before
the first byte lands, files are replaced atomically, and a file whose bytes would not change is not
touched (not even its mtime)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from .. import annotations as ann, workers as forking
from ..errors import InputError
from ..read.package import Package, SourceFile
from ..resource import Resource
from ..yamlio import comments, fast, roundtrip, text
from . import journal, layout, numbering, verify
from .bases import Bases, read_elsewhere
from .body import resolve_body
from .fileends import finish
from .landing import PathChecker, PlannedFiles, check_path, normal  # noqa: F401 - check_path is where report.locate reads a named file
from .staging import Stager, stager_for


@dataclass(frozen=True)
class FileChange:
    path: str
    new: bytes | None  # None: delete
    old: bytes | None  # None: create


@dataclass
class WritePlan:
    root: Path
    changes: list[FileChange] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)

    def summary(self) -> str:
        created = sum(1 for c in self.changes if c.old is None)
        deleted = sum(1 for c in self.changes if c.new is None)
        updated = len(self.changes) - created - deleted
        return f"{created} created, {updated} updated, {deleted} deleted, {len(self.unchanged)} unchanged"


def plan(root: Path | str, resources: list[Resource], original: Package | None = None, check: PathChecker | None = None,
         workers: int | None = None) -> WritePlan:
    """What writing `resources` into root would change, file by file; every path must be one a
    resource may land on (write.landing: by default, `original`'s files or new YAML files).
    `workers`: FNRUN_WORKERS as the edge read it (None: the cores decide)."""
    root = Path(root)
    check = check or checker(root, original)
    by_path: dict[str, list[Resource]] = {}
    for resource in resources:
        path = normal(resource.path or ann.default_path(resource.value))
        by_path.setdefault(path, []).append(resource)
    result = WritePlan(root)
    paths = sorted(by_path)
    planned = PlannedFiles()
    for path in paths:
        check(path)
        planned.add(path)

    def assemble(path: str) -> bytes:
        return _assemble_file(path, by_path[path], original, original.files.get(path) if original else None)

    assembled = _assemble_files(paths, [_weight(by_path[p], original.files.get(p) if original else None) for p in paths], assemble, workers)
    for path in paths:
        source = original.files.get(path) if original else None
        new = assembled[path]
        old = _on_disk(root, path, source, check)
        if old is not None and new == old:
            result.unchanged.append(path)
        else:
            result.changes.append(FileChange(path, new, old))
    result.changes.extend(_deletions(original, set(by_path), check))
    return result


#: What a resource weighs at least: below workers.MIN_BYTES_TO_SHARE in all (about 1,500 small
#: resources), one process assembles faster than forked workers.
_RESOURCE_BYTES = 1300

def _weight(resources: list[Resource], source: SourceFile | None) -> int:
    """A file's share of the assembling: its bytes (a changed document is composed and its edit
    parsed again, a few big CRDs are as much work as thousands of small resources), or its
    resources' count where that says more."""
    return max(len(source.raw) if source is not None else 0, _RESOURCE_BYTES * len(resources))


def _assemble_files(paths: list[str], weights: list[int], assemble: Callable[[str], bytes], workers: int | None) -> dict[str, bytes]:
    """Each path's new bytes; a big plan (thousands of resources, or megabytes of CRDs) is
    assembled on every core, with the same bytes in the same order."""

    def share(start: int, end: int) -> dict[str, bytes]:
        return {path: assemble(path) for path in paths[start:end]}

    assembled: dict[str, bytes] = {}
    for files in forking.fork_map(share, weights, forking.count(sum(weights), forking.MIN_BYTES_TO_SHARE, workers)):
        assembled.update(files)
    return assembled


def _on_disk(root: Path, path: str, source: SourceFile | None, check: PathChecker) -> bytes | None:
    """What the file holds now, as read: the package's own read; None for a file the checker
    judged new (one that appears before the commit is then a stale input, never overwritten);
    for an existing file a sink may update though its reader did not read it (a Kptfile), its
    bytes now."""
    if source is not None:
        return source.raw
    if check.is_new(path):
        return None
    try:
        return (root / path).read_bytes()
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        return None
    except OSError as err:
        raise InputError(f"{path}: cannot read: {err.strerror}") from None


def checker(root: Path, original: Package | None, update_readable: bool = False) -> PathChecker:
    """The landing rule for a write into root: the files of `original` may change, new YAML files
    may appear (write.landing); `update_readable`: a sink, which may also update an existing
    file the package walk would read."""
    return PathChecker(root, original.files if original is not None else (), update_readable)


def _deletions(original: Package | None, kept: set[str], check: PathChecker) -> list[FileChange]:
    """Files of the original package whose resources are all gone: deleted, or, when they hold
    documents that are not resources, rewritten with only those."""
    if original is None:
        return []
    gone = [p for p in sorted(set(original.files) - kept) if original.in_file(p)]
    changes = []
    for path in gone:
        check(path)
        source = original.files[path]
        changes.append(FileChange(path, _remains(original.in_file(path), source), source.raw))
    return changes


def _remains(before: list[Resource], source: SourceFile) -> bytes | None:
    """A file's non-resource documents (with the separators and comments between them) once all
    its resources are gone; None when it holds none."""
    indexes = [r.index for r in before]
    content = text.without_stray_ends(layout.carried(before, indexes, -1, indexes[-1] + 1, set()) + before[-1].suffix)
    documents = [s.text for s in text.split_documents(content) if not s.separator]
    if not any(fast.load(document, source.path) is not None for document in documents):
        return None
    return finish(content, source)


def _assemble_file(path: str, resources: list[Resource], original: Package | None, source: SourceFile | None) -> bytes:
    """The file's new bytes."""
    before = original.in_file(path) if original else []
    ordered = numbering.aligned(resources, before)  # in index order
    assemble = partial(_assembled, path, ordered, before, original, source)
    if _same_layout(ordered, before):
        return assemble(False)
    return verify.checked(path, assemble, ordered, source.raw if source is not None else None)


def _same_layout(ordered: list[Resource], before: list[Resource]) -> bool:
    """Whether the file keeps its documents in their places, each edited in place: its text is
    then its own around bodies each checked where it was made (a text edit parsed, a round trip
    merged and parsed, an unchanged one as read), so the final check would parse it for nothing
    (a label run over megabytes of CRDs)."""
    return len(ordered) == len(before) and all(
        r.index == b.index and layout.same_document(r, b) for r, b in zip(ordered, before)
    )


def _assembled(path: str, ordered: list[Resource], before: list[Resource], original: Package | None, source: SourceFile | None, plain: bool = False) -> bytes:
    """The file's bytes from its resources in index order; `plain`: a changed resource whose text
    does not read back alone as its value is written as a plain dump of it (verify's fallback);
    `before`: the file's resources as read."""
    indexes = [r.index for r in before]
    kept = {r.index for r in ordered}
    parts = []
    previous = -1
    seen = (lambda: _package_comments(original)) if original else frozenset
    bases = Bases(ordered, before, lambda index: original.original(path, index) if original else None,
                  read_elsewhere(original, path) if original else lambda identity: False)
    for position, resource in enumerate(ordered):
        carried = layout.carried(before, indexes, previous, resource.index, kept)
        base, prefix = bases.each[position].body, bases.prefix(position, resource)
        if position == 0 and prefix == ann.DEFAULT_SEPARATOR and resource.index != 0 and not carried:
            prefix = layout.opening(before, kept)
        elif position > 0 and not prefix:
            prefix = ann.DEFAULT_SEPARATOR
        head = carried + prefix
        if position == 0 and "..." in head:
            head = text.without_stray_ends(head)
        body = resolve_body(resource, base, seen)
        if plain and (base is None or body != base.body) and not roundtrip.means(body, resource.value):
            body = fast.dump(resource.value)
        parts.append(head + body)
        previous = resource.index
    if before and indexes[-1] not in kept:
        parts.append(layout.carried(before, indexes, previous, indexes[-1] + 1, kept) + before[-1].suffix)
    else:
        parts.append(layout.tail(before, ordered, bases.holds))
    return finish("".join(parts), source, ordered)


def _package_comments(original: Package) -> frozenset[str]:
    """Every comment of the package as read: a comment that comes back from a function in another
    document than its own was one of these (computed once per package, when first needed). A
    function's own config is left out: a function may copy what its config says, comments too
    (a sidecar template's), and that is the function's change, not a neighbour's line moved."""
    found = original.__dict__.get("_comments")
    if found is None:
        texts = [part for r in original.resources if not _declares_function(r) for part in (r.body or r.text, r.prefix, r.suffix)]
        found = original.__dict__["_comments"] = frozenset(comments.comments("\n".join(texts)))
    return found


def _declares_function(resource: Resource) -> bool:
    found = ann.annotations_of(resource.data)
    return any(key in found for key in (ann.FUNCTION, ann.LEGACY_FUNCTION, ann.LEGACY_CONTAINER))


def apply(plan_: WritePlan) -> None:
    """Write a plan: every new file is staged next to its target first; only when all are staged
    are they renamed into place, then removed files deleted. An error while staging leaves the
    package as it was."""
    stager = Stager(plan_.root)
    try:
        for change in plan_.changes:
            if change.new is not None:
                stager.submit(change.path, change.new)
        with journal.package_lock(plan_.root), journal.signals_held():
            journal.check_unchanged(plan_.root, [(c.path, c.old) for c in plan_.changes])
            stager.commit([c.path for c in plan_.changes if c.new is None])
    except BaseException:
        stager.rollback()
        raise


class StreamWriter:
    """`write` for resources that arrive one by one (a sink reading a pipe): a file is assembled
    and staged as soon as a resource for another path shows it complete, while the input is still
    being decoded; nothing lands before `finish`, which validated every path first. A file that
    gets more resources after it was staged is assembled again. `abort` undoes all staging."""

    def __init__(self, root: Path | str, original: Package | None) -> None:
        self.root = Path(root)
        self.original = original
        self._check = checker(self.root, original, update_readable=True)
        self._planned = PlannedFiles()
        self._stager = stager_for(self.root, streaming=True)
        self._groups: dict[str, list[Resource]] = {}
        self._done: dict[str, FileChange | None] = {}  # assembled paths: their change, None if unchanged
        self._staged: set[str] = set()
        self._current: str | None = None

    def add(self, resource: Resource) -> None:
        path = normal(resource.path or ann.default_path(resource.value))
        if path not in self._groups:
            self._check(path)
            self._planned.add(path)
            self._groups[path] = []
        if self._current is not None and path != self._current:
            self._assemble(self._current)
        self._current = path
        self._groups[path].append(resource)
        self._done.pop(path, None)

    def _assemble(self, path: str) -> None:
        source = self.original.files.get(path) if self.original else None
        new = _assemble_file(path, self._groups[path], self.original, source)
        old = _on_disk(self.root, path, source, self._check)
        if old is not None and new == old:
            if path in self._staged:  # staged before more of its resources came
                self._stager.submit(path, None)
                self._staged.discard(path)
            self._done[path] = None
        else:
            self._done[path] = FileChange(path, new, old)
            self._stager.submit(path, new)
            self._staged.add(path)

    def reset(self) -> None:
        """Start over (the decoder will deliver every resource again)."""
        self._stager.discard()
        self._groups.clear()
        self._done.clear()
        self._staged.clear()
        self._planned = PlannedFiles()
        self._current = None

    def finish(self) -> WritePlan:
        for path in self._groups:
            if path not in self._done:
                self._assemble(path)
        result = WritePlan(self.root)
        for path in sorted(self._done):
            change = self._done[path]
            if change is None:
                result.unchanged.append(path)
            else:
                result.changes.append(change)
        deletions = _deletions(self.original, set(self._groups), self._check)
        result.changes.extend(deletions)
        for change in deletions:
            if change.new is not None:  # non-resource documents kept
                self._stager.submit(change.path, change.new)
        with journal.package_lock(self.root), journal.signals_held():
            journal.check_unchanged(self.root, [(c.path, c.old) for c in result.changes])
            self._stager.commit([c.path for c in deletions if c.new is None])
        return result

    def abort(self) -> None:
        self._stager.rollback()


def write(root: Path | str, resources: list[Resource], original: Package | None = None, workers: int | None = None) -> WritePlan:
    """Plan and apply: the write-back every command uses."""
    result = plan(root, resources, original, workers=workers)
    apply(result)
    return result
