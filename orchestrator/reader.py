"""Read a package: every resource of every YAML file under a directory, stamped with where it
came from (config-io: path and index, and their `internal.` twins)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from . import annotations as ann
from .errors import InputError
from .resource import Resource, set_annotation
from .yamlio import fast, roundtrip, text

YAML_SUFFIXES = (".yaml", ".yml")


@dataclass(frozen=True)
class SourceFile:
    """What the writer needs to leave a file as it was: its bytes and line-end conventions."""

    path: str
    raw: bytes
    crlf: bool
    final_newline: bool


@dataclass
class Package:
    root: Path
    resources: list[Resource] = field(default_factory=list)
    files: dict[str, SourceFile] = field(default_factory=dict)

    def original(self, path: str, index: int) -> Resource | None:
        """The resource read at (path, index): what an output resource is compared against."""
        return self._by_location().get((path, index))

    def _by_location(self) -> dict[tuple[str, int], Resource]:
        cache = self.__dict__.get("_locations")
        if cache is None:
            cache = self.__dict__["_locations"] = {(r.path, r.index): r for r in self.resources}
        return cache


def package_files(root: Path) -> list[str]:
    """YAML files under root (slash-separated, relative, sorted), hidden directories skipped;
    a symlink that leaves the package is refused."""
    real_root = root.resolve()
    found = []
    for directory, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in [*dirs, *files]:
            full = Path(directory, name)
            if full.is_symlink() and not _inside(full.resolve(), real_root):
                raise InputError(f"{full.relative_to(root).as_posix()}: symlink points outside the package")
        for name in files:
            if name.endswith(YAML_SUFFIXES):
                found.append(Path(directory, name).relative_to(root).as_posix())
    return sorted(found)


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def read_package(root: Path | str) -> Package:
    """Every resource under root, in file order then document order."""
    root = Path(root)
    if not root.is_dir():
        raise InputError(f"{root}: not a directory")
    package = Package(root)
    with fast.gc_paused():
        for rel in package_files(root):
            _read_into(package, root, rel)
    return package


def _read_into(package: Package, root: Path, rel: str) -> None:
    try:
        raw = (root / rel).read_bytes()
    except OSError as err:
        raise InputError(f"{rel}: cannot read: {err.strerror}") from None
    source, resources = read_file(rel, raw)
    package.files[rel] = source
    package.resources.extend(resources)


def read_file(rel: str, raw: bytes) -> tuple[SourceFile, list[Resource]]:
    content = fast.decode(raw, rel)
    crlf = "\r\n" in content
    if crlf:
        content = content.replace("\r\n", "\n")
    final_newline = content.endswith("\n") or not content
    if not final_newline:
        content += "\n"
    resources = parse_stream(content, rel, path=rel)
    return SourceFile(rel, raw, crlf, final_newline), resources


def parse_stream(content: str, source: str, path: str | None = None) -> list[Resource]:
    """The resources of a multi-document stream. With `path`, each is stamped with path/index
    and layout notes; documents that are not resources become part of those notes."""
    found: list[tuple[str, object, dict, str]] = []  # (body, node, data, prefix)
    pending = ""
    for segment in text.split_documents(content):
        if segment.separator:
            pending += segment.text
            continue
        lead = text.leading_blank_lines(segment.text)
        lines = segment.text.splitlines(keepends=True)
        head, body = "".join(lines[:lead]), "".join(lines[lead:])
        node, data = fast.parse(body, source, segment.start_line + lead)
        if data is None or (isinstance(data, dict) and not ann.is_resource(data)):
            pending += segment.text
            continue
        if not isinstance(data, dict):
            kind = "list" if isinstance(data, list) else "scalar"
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
        resources.append(stamped(body, node, data, entries))
    return resources


def stamped(body: str, node: object, data: dict, entries: list[tuple[str, str]]) -> Resource:
    """A resource whose text carries `entries` as annotations, inserted as whole lines when the
    document's layout allows (so stripping them restores the bytes), else by round-trip editing."""
    for key, value in entries:
        set_annotation(data, key, value)
    quoted = [(key, text.quote(value)) for key, value in entries]
    stamped_text = text.stamp(body, node, quoted)  # type: ignore[arg-type]
    if stamped_text is None:
        stamped_text = roundtrip.render(body, data)
    return Resource(data, stamped_text, body)
