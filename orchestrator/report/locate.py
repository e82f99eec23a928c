"""The line a resource starts on in its file, for annotations that point at it (GitHub Actions).

Counts documents the way the reader does: separators, blank lead lines and documents that are not
resources do not get an index; the line is that of the resource's first key (below its head
comments), 1-based."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .. import annotations as ann
from ..errors import InputError
from ..yamlio import fast, text


def resource_starts(content: str) -> list[tuple[int, dict]]:
    """(1-based line, value) of every resource in a file's text, in index order."""
    content = content.replace("\r\n", "\n")
    found = []
    for segment in text.split_documents(content):
        if segment.separator:
            continue
        lead = text.leading_blank_lines(segment.text)
        body = "".join(segment.text.splitlines(keepends=True)[lead:])
        try:
            node, data = fast.parse(body, "locate")
        except InputError:
            continue
        if node is not None and ann.is_resource(data):
            found.append((segment.start_line + lead + node.start_mark.line + 1, data))
    return found


def resource_line(root: Path, path: str, index: Any = None, ref: Any = None) -> int | None:
    """The line of resource `index` (or of the one `ref` names) in root/path; 1 when the file is
    there but neither picks a resource; None when the file is not (or not safely) readable."""
    from ..write.writeback import check_path

    try:
        content = check_path(root, path).read_bytes().decode("utf-8")
    except (InputError, OSError, UnicodeDecodeError):
        return None
    starts = resource_starts(content)
    if isinstance(index, (int, str)) and str(index).isdigit() and int(index) < len(starts):
        return starts[int(index)][0]
    if isinstance(ref, dict):
        for line, data in starts:
            if _matches(ref, data):
                return line
    return 1


def _matches(ref: dict, data: dict) -> bool:
    meta = given if isinstance(given := data.get("metadata"), dict) else {}
    pairs = (("kind", data.get("kind")), ("name", meta.get("name")), ("namespace", meta.get("namespace")), ("apiVersion", data.get("apiVersion")))
    return all(ref.get(key) in (None, "") or str(ref.get(key)) == str(value) for key, value in pairs) and bool(ref.get("name"))
