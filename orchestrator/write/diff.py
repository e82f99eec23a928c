"""Unified diffs of a write plan, git style (`a/`, `b/`, /dev/null for created and deleted files).

`--check` and `--diff` diff the plan's own old/new bytes, so what they show is exactly what a write
produces (or produced). Paths carry a prefix (the package's place in its git repository, from
report.paths) so `git apply` from the repository root reproduces the write."""

from __future__ import annotations

import stat
from collections.abc import Callable
from pathlib import Path

from ..errors import DriftError
from ..yamlio import text
from .writeback import FileChange, WritePlan

NO_NEWLINE = "\\ No newline at end of file\n"
#: Files together smaller than this are matched whole; bigger ones lose their common head and
#: tail (but for the context lines) before any line is made: a one-line change in a big file
#: then costs a comparison of bytes, and small files keep SequenceMatcher's own answer.
TRIM_FROM = 1 << 16


def unified(plan: WritePlan, context: int = 3, prefix: str = "") -> str:
    """The diff of every file the plan creates, updates or deletes, in the plan's (path) order;
    `prefix` ("deploy/app/") goes before every package path."""
    return "".join(file_diff(change, plan.root, context, prefix) for change in plan.changes)


def file_diff(change: FileChange, root: Path | None = None, context: int = 3, prefix: str = "") -> str:
    """One file's diff with git's headers, so `git apply` knows created and deleted files."""
    path = prefix + change.path
    header = [f"diff --git a/{path} b/{path}\n"]
    if change.old is None:
        header.append("new file mode 100644\n")
    elif change.new is None:
        header.append(f"deleted file mode {_mode(root / change.path) if root else '100644'}\n")
    old_name = "/dev/null" if change.old is None else f"a/{path}"
    new_name = "/dev/null" if change.new is None else f"b/{path}"
    lines = _unified(change.old, change.new, old_name, new_name, context)
    body = [line if line.endswith("\n") else line + "\n" + NO_NEWLINE for line in lines]
    if not body:  # same bytes (cannot happen for a plan's change, but an empty new file can)
        body = [f"--- {old_name}\n", f"+++ {new_name}\n"] if change.old is None or change.new is None else []
    return "".join(header + body)


def first_changed_line(change: FileChange) -> int | None:
    """The 1-based line of the old file where the change begins (None for a created file)."""
    if change.old is None:
        return None
    offset, old, new = _window(change.old, change.new, 0)
    from ..yamlio.linematch import Matcher  # difflib with it: only a run that shows or finds a change

    for tag, start, _end, _new_start, _new_end in Matcher(old, new, autojunk=False).get_opcodes():
        if tag != "equal":
            return min(offset + start + 1, max(offset + len(old), 1))
    return 1


def _unified(old_bytes: bytes | None, new_bytes: bytes | None, old_name: str, new_name: str, context: int) -> list[str]:
    """The lines of a unified diff, as difflib.unified_diff writes them (no dates)."""
    offset, old, new = _window(old_bytes, new_bytes, context)
    out: list[str] = []
    from ..yamlio.linematch import Matcher

    for group in Matcher(old, new).get_grouped_opcodes(context):
        if not out:
            out += [f"--- {old_name}\n", f"+++ {new_name}\n"]
        out.append(f"@@ -{_range(offset + group[0][1], offset + group[-1][2])} +{_range(offset + group[0][3], offset + group[-1][4])} @@\n")
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                out += [" " + line for line in old[i1:i2]]
                continue
            out += ["-" + line for line in old[i1:i2]]
            out += ["+" + line for line in new[j1:j2]]
    return out


def _range(start: int, stop: int) -> str:
    """A hunk's line range: `first,count`, `first` alone for one line, the line before for none."""
    count = stop - start
    if count == 1:
        return str(start + 1)
    return f"{start + 1 if count else start},{count}"


def _window(old: bytes | None, new: bytes | None, context: int) -> tuple[int, list[str], list[str]]:
    """The lines of both versions that can hold a hunk, and how many lines come before them.

    Beyond the bytes both share at their start and at their end, `context` lines each side are
    all a diff can show, so only those and what lies between are split into lines: the common
    head and tail are found by comparing blocks of bytes, and a diff that shifts its line
    numbers by the offset is the whole files' diff."""
    old, new = old or b"", new or b""
    if len(old) + len(new) < TRIM_FROM:
        return 0, _lines(old), _lines(new)
    head = _agreeing(min(len(old), len(new)), lambda lo, hi: old[lo:hi] == new[lo:hi])
    tail = _agreeing(
        min(len(old), len(new)) - head,
        lambda lo, hi: old[len(old) - hi : len(old) - lo] == new[len(new) - hi : len(new) - lo],
    )
    # A line start in both: after a newline of the common head, or of the common tail.
    start = old.rfind(b"\n", 0, head) + 1
    stop = _next_line(old, len(old) - tail)
    for _ in range(context):
        start = old.rfind(b"\n", 0, start - 1) + 1 if start else 0
        stop = _next_line(old, stop)
    stop_new = stop + len(new) - len(old)  # the tail is the same bytes in both
    return old.count(b"\n", 0, start), _lines(old[start:stop]), _lines(new[start:stop_new])


def _next_line(text: bytes, position: int) -> int:
    """Where the first line that starts after `position` starts (the end, if none does)."""
    found = text.find(b"\n", position)
    return len(text) if found < 0 else found + 1


def _agreeing(limit: int, same: Callable[[int, int], bool]) -> int:
    """How many bytes (at most `limit`) agree, where `same(lo, hi)` compares bytes lo to hi
    counted from one end: blocks compared at memcmp speed, growing while they agree, then the
    block that differs halved down to the byte. Linear: each byte is compared a few times."""
    done, size = 0, 4096
    while done < limit:
        end = min(done + size, limit)
        if not same(done, end):
            while end - done > 1:
                middle = (done + end) // 2
                if same(done, middle):
                    done = middle
                else:
                    end = middle
            return done
        done, size = end, min(size * 2, 1 << 20)
    return limit


def _lines(content: bytes | None) -> list[str]:
    """Lines ended by "\n" only, as git cuts them (str.splitlines, C-fast, also cuts at \r,
    \u2028 and friends: it serves only where the text holds none)."""
    if not content:
        return []
    whole = content.decode("utf-8")
    if not any(mark in whole for mark in text.OTHER_BREAKS):
        return whole.splitlines(keepends=True)
    parts = whole.split("\n")
    return [part + "\n" for part in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def _mode(path: Path) -> str:
    try:
        executable = path.stat().st_mode & stat.S_IXUSR
    except OSError:
        executable = 0
    return "100755" if executable else "100644"


class Drift(DriftError):
    """`--check` found files that differ from what the functions make of them (exit 3: out of date, which
    a CI step tells apart from a function that failed)."""


def drift_message(directory: str, plan: WritePlan, command: str = "run", rerun: str | None = None) -> str:
    """What would change, and the command that writes it (`rerun`: the user's own command line
    without --check, so the flags that shaped the check shape the write too)."""
    files = len(plan.changes)
    created = sum(1 for c in plan.changes if c.old is None)
    deleted = sum(1 for c in plan.changes if c.new is None)
    return (
        f"{directory}: {files} file{'s' if files != 1 else ''} would change "
        f"({created} created, {files - created - deleted} updated, {deleted} deleted); run `{rerun or f'fnrun {command} {directory}'}` to write them"
    )
