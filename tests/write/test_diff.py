"""The unified diff of a plan: exact line numbers and lines, whether the files are small (matched
whole) or big (matched only between their common head and tail)."""

from __future__ import annotations

import difflib
import re

from hypothesis import given, settings, strategies as st

from orchestrator.write import diff
from orchestrator.write.writeback import FileChange

_HUNK = re.compile(r"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@\n")


def _apply(old: str, patch: str) -> str:
    """`patch` applied to `old` strictly: every hunk at exactly its line numbers, every context and
    removed line as it stands in `old` (git apply would accept a hunk that moved)."""
    lines = old.splitlines(keepends=True) if old else []
    body = patch.splitlines(keepends=True)
    assert body[0].startswith("diff --git ") and body[1].startswith("--- ") and body[2].startswith("+++ "), patch
    out: list[str] = []
    done = 0  # lines of old copied or consumed
    at = 3
    while at < len(body):
        found = _HUNK.fullmatch(body[at])
        assert found, body[at]
        old_start, old_count = int(found[1]), int(found[2] or 1)
        new_start, new_count = int(found[3]), int(found[4] or 1)
        first = old_start - 1 if old_count else old_start  # an empty range names the line before
        assert first >= done, "hunks overlap or go backwards"
        out += lines[done:first]
        assert (new_start - 1 if new_count else new_start) == len(out), "the new range starts elsewhere"
        done, at, seen_old, seen_new = first, at + 1, 0, 0
        while at < len(body) and not body[at].startswith("@@"):
            mark, line = body[at][0], body[at][1:]
            if at + 1 < len(body) and body[at + 1] == diff.NO_NEWLINE:
                line, at = line[:-1], at + 1
            if mark in " -":
                assert lines[done] == line, (done, lines[done], line)
                done, seen_old = done + 1, seen_old + 1
            if mark in " +":
                out.append(line)
                seen_new += 1
            at += 1
        assert (seen_old, seen_new) == (old_count, new_count), body
    return "".join(out + lines[done:])


def _diff(old: str, new: str) -> str:
    return diff.file_diff(FileChange("f.yaml", new.encode(), old.encode()))


_line = st.sampled_from(["a: 1\n", "b: 2\n", "  - x\n", "# c\n", "\n", "c: \"q\"\n", "é: ü\n"])


@settings(max_examples=150, deadline=None)
@given(
    base=st.lists(_line, min_size=0, max_size=60),
    edits=st.lists(st.tuples(st.integers(0, 10_000), st.integers(0, 3), st.lists(_line, max_size=3)), max_size=5),
    repeat=st.sampled_from([1, 3000]),
    no_final_newline=st.booleans(),
)
def test_the_diff_applies_exactly_to_small_and_big_files(base: list[str], edits: list[tuple[int, int, list[str]]], repeat: int, no_final_newline: bool) -> None:
    old_lines = [f"n{i}\n" if i % 97 == 0 else line for i, line in enumerate(base * repeat)]  # a hunk one line off shows
    new_lines = list(old_lines)
    for position, removed, added in edits:
        position = position % (len(new_lines) + 1)
        new_lines[position : position + removed] = added
    old, new = "".join(old_lines), "".join(new_lines)
    if no_final_newline:
        new = new.rstrip("\n")
    if old == new:
        return
    assert _apply(old, _diff(old, new)) == new


def test_one_change_in_a_big_file_is_difflibs_hunk() -> None:
    old = "".join(f"  key{i}: value {i}\n" for i in range(40_000))
    assert len(old) > diff.TRIM_FROM
    for at in (0, 3, 20_000, 39_998):
        new = old.replace(f"  key{at}: value {at}\n", f"  key{at}: value {at}\n  team: web\n", 1)
        expected = "".join(difflib.unified_diff(old.splitlines(True), new.splitlines(True), "a/f.yaml", "b/f.yaml"))
        assert _diff(old, new) == "diff --git a/f.yaml b/f.yaml\n" + expected
        assert diff.first_changed_line(FileChange("f.yaml", new.encode(), old.encode())) == at + 2


def test_a_file_losing_its_final_newline_says_so() -> None:
    old = "".join(f"k{i}: v\n" for i in range(20_000))
    patch = _diff(old, old[:-1])
    assert patch.endswith("+k19999: v\n" + diff.NO_NEWLINE)
    assert _apply(old, patch) == old[:-1]
