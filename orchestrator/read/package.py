"""Read a package: every resource of every YAML file under a directory, stamped with where it
came from (config-io: path and index, and their `internal.` twins)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from .. import annotations as ann, workers as forking
from ..errors import InputError
from ..resource import Resource, set_annotations
from ..write import journal
from ..yamlio import fast, roundtrip, text
from .krmignore import KrmIgnore
from .notices import Note

if TYPE_CHECKING:
    from yaml.nodes import Node

YAML_SUFFIXES = (".yaml", ".yml")


@dataclass(frozen=True)
class SourceFile:
    """What the writer needs to leave a file as it was: its bytes and line-end conventions."""

    path: str
    raw: bytes
    crlf: bool
    final_newline: bool
    notes: tuple[Note, ...] = ()  # documents left alone (read.notices)


@dataclass
class Package:
    root: Path
    resources: list[Resource] = field(default_factory=list)
    files: dict[str, SourceFile] = field(default_factory=dict)

    @property
    def notes(self) -> list[Note]:
        """The documents the reader left alone, in file order (read.notices)."""
        return [note for source in self.files.values() for note in source.notes]

    def original(self, path: str, index: int) -> Resource | None:
        """The resource read at (path, index): what an output resource is compared against."""
        return self._by_location().get((path, index))

    def in_file(self, path: str) -> list[Resource]:
        """The resources read from one file, in document order."""
        cache = self.__dict__.get("_files")
        if cache is None:
            cache = self.__dict__["_files"] = {}
            for resource in self.resources:
                cache.setdefault(resource.path, []).append(resource)
        return cache.get(path, [])

    def _by_location(self) -> dict[tuple[str, int], Resource]:
        cache = self.__dict__.get("_locations")
        if cache is None:
            cache = self.__dict__["_locations"] = {(r.path, r.index): r for r in self.resources}
        return cache


def package_files(root: Path, names: tuple[str, ...] = ()) -> list[str]:
    """YAML files under root (slash-separated, relative, sorted), hidden directories skipped and
    symlinked directories not entered, paths `.krmignore` excludes left out; a symlink that leaves
    the package is refused, and so is a `*.yaml` that is not a regular file (a FIFO would block the
    read forever)."""
    journal.recover(Path(root))
    real_root = os.path.realpath(root)
    ignore = KrmIgnore(root)
    found: list[str] = []
    strays: list[str] = []
    pending = [("", os.fspath(root))]
    while pending:
        rel_dir, directory = pending.pop()
        try:
            entries = list(os.scandir(directory))
        except OSError as err:
            raise InputError(f"{rel_dir or './'}: cannot read directory: {err.strerror}") from None
        for entry in entries:
            rel = f"{rel_dir}{entry.name}"
            if ignore.excluded_entry(rel_dir, entry.name, entry.is_dir(follow_symlinks=False)):
                continue
            if entry.is_symlink() and not _inside(os.path.realpath(entry.path), real_root):
                raise InputError(f"{rel}: symlink points outside the package")
            if entry.is_dir(follow_symlinks=False):
                if not entry.name.startswith("."):
                    pending.append((rel + "/", entry.path))
            elif (entry.name.endswith(YAML_SUFFIXES) or entry.name in names) and not entry.is_dir():
                if not entry.is_file():
                    broken = entry.is_symlink() and not os.path.exists(entry.path)
                    raise InputError(f"{rel}: cannot read: {'a broken symlink' if broken else 'not a regular file'}")
                _utf8_name(rel)
                found.append(rel)
            elif entry.name.endswith(journal.TEMP_SUFFIX):
                strays.append(entry.path)
    journal.remove_strays(strays)
    return sorted(found)


def _utf8_name(rel: str) -> None:
    """A file's path is text in a ResourceList (YAML, JSON), which cannot hold a name that is not
    UTF-8 (Python holds its bytes as lone surrogates; kpt writes such a file back under another
    name): refused, naming the file with its odd bytes escaped."""
    try:
        rel.encode("utf-8")
    except UnicodeEncodeError:
        shown = os.fsencode(rel).decode("utf-8", "backslashreplace")
        raise InputError(f"{shown}: the file name is not UTF-8, which a ResourceList cannot carry; rename the file") from None


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def read_package(root: Path | str, names: tuple[str, ...] = (), kustomizations: bool = False, workers: int | None = None) -> Package:
    """Every resource under root, in file order then document order; `names` are extra file
    names read as YAML (`fnrun render` reads each `Kptfile`), and with `kustomizations` a
    kustomization file counts as a resource as kpt has it (`kustomization`). A big package is
    parsed on every core, or by `workers` processes (FNRUN_WORKERS, read at the edge;
    orchestrator.workers), with the same result and the same first error."""
    root = Path(root)
    package = Package(root)
    rels = _listed(root, names)
    sizes = [_size(root / rel) for rel in rels]

    def share(start: int, end: int) -> list[tuple[SourceFile, list[Resource]]]:
        return [read_path(root, rel, kustomizations) for rel in rels[start:end]]

    for part in forking.fork_map(share, sizes, forking.count(sum(sizes), forking.MIN_BYTES_TO_SHARE, workers)):
        for source, resources in part:
            package.files[source.path] = source
            package.resources.extend(resources)
    return package


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0  # reading it says what is wrong


def require_directory(root: Path) -> None:
    """A package is a directory: say which of the two things is wrong with `root` when it is not."""
    if not root.is_dir():
        raise InputError(f"{root}: {'not a directory' if os.path.lexists(root) else 'does not exist'}")


def _listed(root: Path, names: tuple[str, ...]) -> list[str]:
    require_directory(root)
    return package_files(root, names)


def read_path(root: Path, rel: str, kustomizations: bool = False) -> tuple[SourceFile, list[Resource]]:
    """One package file, read and parsed."""
    try:
        raw = (root / rel).read_bytes()
    except OSError as err:
        raise InputError(f"{rel}: cannot read: {err.strerror}") from None
    return read_file(rel, raw, kustomizations)


def read_file(rel: str, raw: bytes, kustomizations: bool = False) -> tuple[SourceFile, list[Resource]]:
    """One package file's resources; documents that are not resources, or cannot be read
    faithfully, stay in the file's layout and are noted (read.notices)."""
    content = fast.decode(raw, rel)
    crlf = "\r\n" in content
    lf_lines = text.lf_lines(content) if crlf and content.count("\n") != content.count("\r\n") else ""
    if crlf:
        content = content.replace("\r\n", "\n")
    final_newline = content.endswith("\n") or not content
    if not final_newline:
        content += "\n"
    file_format = ",".join(
        name
        for name, on in (
            (ann.CRLF, crlf),
            (ann.NO_FINAL_NEWLINE, not final_newline),
            (ann.LF_LINES + lf_lines, lf_lines),
            (ann.BOM, raw.startswith(ann.BOM_BYTES)),
        )
        if on
    )
    notes: list[Note] = []
    resources = parse_stream(content, rel, path=rel, file_format=file_format, notes=notes, kustomizations=kustomizations)
    return SourceFile(rel, raw, crlf, final_newline, tuple(notes)), resources


def parse_stream(
    content: str, source: str, path: str | None = None, file_format: str = "", notes: list[Note] | None = None, kustomizations: bool = False
) -> list[Resource]:
    """The resources of a multi-document stream. With `path` (a package file), each is stamped with
    path/index and layout notes, and documents that are not resources become part of those notes;
    without it (a stream on stdin) every non-empty document must be a resource. Given `notes`,
    documents that are not KRM or cannot be read faithfully (duplicate keys, application tags)
    are left in the layout too and noted there, instead of being errors."""
    found: list[tuple[str, Node | None, dict, str]] = []  # (body, node, data, prefix)
    pending = ""
    for segment in text.split_documents(content):
        if segment.separator:
            pending += segment.text
            continue
        lead = text.leading_blank_lines(segment.text)
        lines = segment.text.splitlines(keepends=True)
        head, body = "".join(lines[:lead]), "".join(lines[lead:])
        try:
            node, data = fast.parse(body, source, segment.start_line + lead)
        except fast.OddDocument as odd:
            if notes is None or path is None:
                raise
            resource = _is_resource(odd.data, path, kustomizations)
            notes.append(Note(path, odd.line, odd.problem, resource, odd.data if resource else None))
            pending += segment.text
            continue
        resource = _is_resource(data, path, kustomizations)
        if data is None or (not resource and path is not None and (notes is not None or isinstance(data, dict))):
            if data is not None and notes is not None and path is not None:  # (data there: path is)
                notes.append(Note(path, segment.start_line + lead + 1))
            pending += segment.text
            continue
        if not resource:
            kind = "list" if isinstance(data, list) else "mapping without apiVersion or kind" if isinstance(data, dict) else "scalar"
            raise InputError(f"{source}:{segment.start_line + lead + 1}: expected a resource (a mapping with apiVersion and kind), found a {kind}")
        found.append((body, node, data, pending + head))
        pending = ""
    resources = []
    for index, (body, node, data, prefix) in enumerate(found):
        if path is None:
            resources.append(Resource(data, body, body))
            continue
        entries = [(ann.PATH, path), (ann.INDEX, str(index)), (ann.INTERNAL_PATH, path), (ann.INTERNAL_INDEX, str(index))]
        if prefix != ann.default_prefix(index):
            entries.append((ann.PREFIX, prefix))
        if index == len(found) - 1 and pending:
            entries.append((ann.SUFFIX, pending))
        if index == len(found) - 1 and file_format:
            entries.append((ann.FILE_FORMAT, file_format))
        resources.append(stamped(body, node, data, entries))
    return resources


def _is_resource(data: object, path: str | None, kustomizations: bool) -> bool:
    """A resource has apiVersion and kind; with `kustomizations`, so has a kustomization file."""
    return ann.is_resource(data) or (kustomizations and kustomization(data, path))


KUSTOMIZATION_FILES = ("kustomization.yaml", "kustomization.yml", "Kustomization")


def kustomization(data: object, path: str | None) -> bool:
    """kpt's test for a kustomization, which `kpt fn render` and `fn eval` hand to functions like
    any resource though it may lack apiVersion and kind: a mapping in a file named as kustomize
    names it, or with a kustomize.config.k8s.io apiVersion, or no apiVersion and kind Kustomization."""
    if not isinstance(data, dict):
        return False
    if path is not None and path.rsplit("/", 1)[-1] in KUSTOMIZATION_FILES:
        return True
    api_version, kind = data.get("apiVersion"), data.get("kind")
    return (isinstance(api_version, str) and api_version.startswith("kustomize.config.k8s.io")) or (not api_version and kind == "Kustomization")


def stamped(body: str, node: object, data: dict, entries: list[tuple[str, str]]) -> Resource:
    """A resource whose text carries `entries` as annotations, inserted as whole lines when the
    document's layout allows (so stripping them restores the bytes), else by round-trip editing,
    with the document's own text kept in a layout note so a sink can still restore it."""
    stamped_text = text.stamp(body, node, [(key, text.quote(value)) for key, value in entries])  # type: ignore[arg-type]
    if stamped_text is None:
        entries = [*entries, (ann.ORIGINAL, body)]
    set_annotations(data, entries)
    if stamped_text is None:
        stamped_text = roundtrip.render(body, data)
    return Resource(data, stamped_text, body)
