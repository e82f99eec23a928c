"""A file's bytes from the text fnrun assembled for it: the line ends, final newline and byte
order mark the file had (or, for a new file, that its resources' layout note asks for)."""

from __future__ import annotations

from .. import annotations as ann
from ..errors import InputError
from ..read.package import SourceFile
from ..resource import Resource
from ..yamlio import fast, text


def finish(content: str, source: SourceFile | None, resources: list[Resource] = []) -> bytes:  # noqa: B006 - read only
    """The file's bytes with its line ends: CRLF or LF as it had them (each line its own in a file
    that mixes them), no final newline where it had none, and its byte order mark if it had one."""
    if source is not None:
        crlf, final_newline, lf, bom = source.crlf, source.final_newline, None, source.raw.startswith(ann.BOM_BYTES)
    else:
        crlf, final_newline, lf, bom = file_format(resources)
    mark = ann.BOM_BYTES if bom else b""
    if not final_newline and content.endswith("\n"):
        content = without_final_newline(content, source, resources)
    if crlf and source is not None and source.raw.count(b"\n") != source.raw.count(b"\r\n"):
        return mark + text.with_line_ends(content, fast.decode(source.raw, source.path)).encode("utf-8")
    if crlf and lf:
        return mark + text.with_ends_at(content, lf).encode("utf-8")
    if crlf:
        content = content.replace("\n", "\r\n")
    return mark + content.encode("utf-8")


def without_final_newline(content: str, source: SourceFile | None, resources: list[Resource] = []) -> str:  # noqa: B006 - read only
    """`content` without its final newline, unless that newline is part of a value: a file's
    last line may now end a block scalar (`|`, `>`) whose clipped line break the file had not
    (its last document deleted, or its end edited); the value keeps its break, so the file keeps
    its newline. Only the last document is read again, and only when the file's tail changed.

    A new file (a sink's) has no bytes to compare with: its last resource's own text, noted as
    the end of a file without a final newline, is that end when it still ends the file (the
    reader read that file with a newline added, so its value is the file's as written)."""
    stripped = content[:-1]
    if source is not None and source.raw.endswith(stripped[stripped.rfind("\n") + 1 :].encode("utf-8")):
        return stripped  # the file ends as it did
    if source is None and _ends_as_noted(content, resources):
        return stripped
    last = next((s.text for s in reversed(text.split_documents(content)) if not s.separator), "")
    try:
        same = fast.load(last, "") == fast.load(last[:-1], "")
    except InputError:  # a doubt keeps the newline, which is always valid
        same = False
    return stripped if same else content


def _ends_as_noted(content: str, resources: list[Resource]) -> bool:
    """Whether the file's last resource is the one noted as ending a file without a final newline,
    and its text with what followed it there still ends the content. Its text is the one it
    travelled as, or the one noted as the user's (`fnrun source` renames an anchor another item
    of the list already uses, and the write-back then writes the noted text)."""
    last = resources[-1] if resources else None
    if last is None or ann.NO_FINAL_NEWLINE not in last.file_format.split(","):
        return False
    texts = [t for t in (last.body, last.original_text) if t is not None]
    return any(content.endswith(t + last.suffix) or content.endswith(t.rstrip("\n") + "\n" + last.suffix) for t in texts)


def file_format(resources: list[Resource]) -> tuple[bool, bool, set[int] | None, bool]:
    """(crlf, final newline, the lines of a mixed file that end in LF, byte order mark) of a file
    that does not exist yet, from its resources' layout note."""
    noted = next((r.file_format for r in reversed(resources) if r.file_format), "").split(",")
    lf = next((set(map(int, n[len(ann.LF_LINES) :].split())) for n in noted if n.startswith(ann.LF_LINES)), None)
    return ann.CRLF in noted, ann.NO_FINAL_NEWLINE not in noted, lf, ann.BOM in noted
