"""Unified diffs of a write plan, git style (`a/`, `b/`, /dev/null for created and deleted files).

`--check` and `--diff` diff the plan's own old/new bytes, so what they show is exactly what a write
produces (or produced). Paths carry a prefix (the package's place in its git repository, from
report.paths) so `git apply` from the repository root reproduces the write."""

from __future__ import annotations

import stat
from pathlib import Path

from ..errors import DriftError
from ..yamlio import linematch
from .writeback import FileChange, WritePlan

NO_NEWLINE = "\\ No newline at end of file\n"


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
    lines = _unified(_lines(change.old), _lines(change.new), old_name, new_name, context)
    body = [line if line.endswith("\n") else line + "\n" + NO_NEWLINE for line in lines]
    if not body:  # same bytes (cannot happen for a plan's change, but an empty new file can)
        body = [f"--- {old_name}\n", f"+++ {new_name}\n"] if change.old is None or change.new is None else []
    return "".join(header + body)


def first_changed_line(change: FileChange) -> int | None:
    """The 1-based line of the old file where the change begins (None for a created file)."""
    if change.old is None:
        return None
    old, new = _lines(change.old), _lines(change.new)
    for tag, start, _end, _new_start, _new_end in linematch.Matcher(old, new, autojunk=False).get_opcodes():
        if tag != "equal":
            return min(start + 1, max(len(old), 1))
    return 1


def _unified(old: list[str], new: list[str], old_name: str, new_name: str, context: int) -> list[str]:
    """The lines of a unified diff, as difflib.unified_diff writes them (no dates)."""
    out: list[str] = []
    for group in linematch.Matcher(old, new).get_grouped_opcodes(context):
        if not out:
            out += [f"--- {old_name}\n", f"+++ {new_name}\n"]
        out.append(f"@@ -{_range(group[0][1], group[-1][2])} +{_range(group[0][3], group[-1][4])} @@\n")
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


def _lines(content: bytes | None) -> list[str]:
    """Lines ended by "\n" only (str.splitlines would also cut at \u2028 and friends, git does not)."""
    if content is None:
        return []
    parts = content.decode("utf-8").split("\n")
    return [part + "\n" for part in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def _mode(path: Path) -> str:
    try:
        executable = path.stat().st_mode & stat.S_IXUSR
    except OSError:
        executable = 0
    return "100755" if executable else "100644"


class Drift(DriftError):
    """`--check` found files that are not what the functions render (exit 3: out of date, which
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
