"""What a case expects against what happened, by kpt's runner's rules: the exit code exactly;
stdErr and stdOut contained in the output (stderr without stdErrStripLines, the temporary
directory's prefix, kpt's `[PASS] x in 1.2s` timings); stdErrRegEx found in stderr (RE2, as Go's
regexp: linear); the results file (without actualStripLines) and the `git diff` equal to
results.yaml and diff.patch once trimmed, diffStripRegEx's lines and index/hunk numbers aside."""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from pathlib import Path

import re2

from .config import EXPECTED, CaseConfig, CaseError


@dataclass(frozen=True)
class Outcome:
    """What one run of a case did."""

    exit_code: int
    stdout: str
    stderr: str
    results: str  # the results file, trimmed ('' when none was asked for or written)
    diff: str  # `git diff` of the package, trimmed


@dataclass(frozen=True)
class Mismatch:
    """Why a run failed its case: one line, and the detail a reader needs (a diff)."""

    reason: str
    detail: str = ""


def expected_file(case: Path, name: str) -> str:
    """results.yaml or diff.patch, trimmed; '' when absent. A diff.patch that is not a git patch is a CaseError."""
    path = case / EXPECTED / name
    if not path.exists():
        return ""
    try:
        text = path.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError) as err:
        raise CaseError(f"{path}: cannot be read: {err}") from None
    if name == "diff.patch" and text and not text.startswith("diff --git "):
        raise CaseError(f"{path}: not a patch (a `git diff` starts with `diff --git`)")
    return text


def compare(case: Path, config: CaseConfig, outcome: Outcome, scratch: str) -> Mismatch | None:
    """None when the run is what the case expects."""
    if outcome.exit_code != config.exit_code:
        return exit_mismatch(outcome, config.exit_code)
    stderr = clean_stderr(outcome.stderr, config, scratch)
    if config.std_err not in stderr:
        return Mismatch("stderr does not contain stdErr", unified(config.std_err, stderr, "stdErr", "stderr"))
    if config.std_err_regex:
        try:
            pattern = re2.compile(config.std_err_regex)
        except re2.error as err:
            raise CaseError(f"{case / EXPECTED / 'config.yaml'}: stdErrRegEx {config.std_err_regex!r} does not compile: {err}") from None
        if pattern.search(stderr) is None:
            return Mismatch(f"stderr does not match stdErrRegEx {config.std_err_regex!r}", _tail(stderr))
    if config.std_out not in outcome.stdout:
        return Mismatch("stdout does not contain stdOut", unified(config.std_out, outcome.stdout, "stdOut", "stdout"))
    results = strip_lines(outcome.results, config.actual_strip_lines)
    want_results = expected_file(case, "results.yaml")
    if results != want_results:
        return Mismatch("results differ from results.yaml", unified(want_results, results, "results.yaml", "actual results"))
    actual, want = outcome.diff, expected_file(case, "diff.patch")
    if config.diff_strip_regex:
        actual, want = (normalise_diff(text, config.diff_strip_regex, case) for text in (actual, want))
    if actual != want:
        return Mismatch("the package's diff differs from diff.patch", unified(want, actual, "diff.patch", "actual diff"))
    return None


def exit_mismatch(outcome: Outcome, want: int) -> Mismatch:
    """The exit code's mismatch, with the run's last stderr line (what it said on the way out)."""
    last = outcome.stderr.strip().splitlines()[-1:] or [""]
    return Mismatch(f"exit code {outcome.exit_code}, expected {want}" + (f": {last[0][:300]}" if last[0] else ""), _tail(outcome.stderr))


def clean_stderr(stderr: str, config: CaseConfig, scratch: str) -> str:
    return strip_lines(_without_timings(stderr), config.std_err_strip_lines).replace(scratch.rstrip("/") + "/", "")


def strip_lines(text: str, lines: tuple[str, ...]) -> str:
    for line in lines:
        text = text.replace(line + "\n", "")
    return text


def _without_timings(stderr: str) -> str:
    """kpt's `[PASS] "image" in 1.2s` lines with the time as 0s (kpt's runner does the same)."""
    out = []
    for line in stderr.split("\n"):
        if line.startswith(("[PASS]", "[FAIL]")):
            tokens = line.split()
            if len(tokens) == 4 and tokens[2] == "in":
                line = " ".join([*tokens[:3], "0s"])
        out.append(line)
    return "\n".join(out)


def normalise_diff(diff: str, strip: str, case: Path) -> str:
    """Without the lines matching `strip`; index lines and hunk headers with their numbers replaced."""
    try:
        pattern = re2.compile(strip)
    except re2.error as err:
        raise CaseError(f"{case / EXPECTED / 'config.yaml'}: diffStripRegEx {strip!r} does not compile: {err}") from None
    out = []
    for line in diff.split("\n"):
        if pattern.search(line) is not None:
            continue
        if line.startswith("index ") and ".." in line:
            line = "index NORMALIZED" + line[len(line.split(" ", 2)[1]) + 6 :] if " " in line[6:] else "index NORMALIZED"
        elif line.startswith("@@ -"):
            end = line.find(" @@", 4)
            line = "@@ NORMALIZED @@" + line[end + 3 :] if end >= 0 else line
        out.append(line)
    return "\n".join(out)


def unified(want: str, got: str, want_name: str, got_name: str) -> str:
    return "".join(difflib.unified_diff(want.splitlines(True), got.splitlines(True), want_name, got_name))


def _tail(text: str, lines: int = 20) -> str:
    return "\n".join(text.rstrip().splitlines()[-lines:])
