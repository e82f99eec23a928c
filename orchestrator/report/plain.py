"""Plain lines for logs and pipes: one line per function, its results, its stderr prefixed with
its name, and a summary. `--quiet` keeps only what failed; `--verbose` adds what ran where and
every file written."""

from __future__ import annotations

import sys
from collections import deque
from typing import IO, TYPE_CHECKING

from .base import HELD_LINES, Display, RunSummary, changes_text, describe

if TYPE_CHECKING:
    from ..events import FunctionReport
    from ..select.functions import FunctionSpec


class PlainEvents(Display):
    def __init__(self, stream: IO[str] | None = None, quiet: bool = False, verbose: bool = False) -> None:
        super().__init__(quiet=quiet, verbose=verbose)
        self.stream = stream or sys.stderr
        self._held: deque[str] = deque(maxlen=HELD_LINES)  # --quiet: a function's stderr tail, shown only if it fails

    def say(self, line: str) -> None:
        print(line, file=self.stream, flush=True)

    def started(self, spec: FunctionSpec) -> None:
        self._held.clear()
        if self.verbose:
            where = f"declared in {spec.declared_in}, " if spec.declared_in else ""
            self.say(f"[run] {spec.name} ({where}scope {spec.scope})")

    def stderr(self, spec: FunctionSpec, line: str) -> None:
        text = f"[{spec.name}] {line.rstrip()}"
        if self.quiet:
            self._held.append(text)
        else:
            self.say(text)

    def finished(self, spec: FunctionSpec, report: FunctionReport) -> None:
        if self.quiet and report.error is None:
            return
        for line in self._held:
            self.say(line)
        self._held.clear()
        # why a function failed is the run's closing error line; only a deferred failure, which
        # the closing line may not name, says it here too
        self.say(status_line(spec.name, report, reason=spec.defer_failure))
        for result in report.results:
            self.result(spec, result)

    def result(self, spec: FunctionSpec, result: dict) -> None:
        self.say(f"  {describe(result)}")

    def summary(self, summary: RunSummary) -> None:
        if self.quiet:
            return
        self.say(f"fnrun {summary.command}{' --check' if summary.check else ''}: {summary.line()}")
        if self.verbose:
            for line in file_lines(summary):
                self.say(f"  {line}")


def status_line(name: str, report: FunctionReport, reason: bool = True) -> str:
    """`[ok] IMAGE (0.52s, 2 changed)`, `[failed] IMAGE (0.10s): why` (`reason`), or
    `[interrupted] IMAGE (2.40s)` for a function stopped by Ctrl-C/SIGTERM. A Kptfile step names
    its Kptfile (`[ok] IMAGE (app/Kptfile, 0.52s, ...)`): which package it belongs to."""
    from ..runtimes.container import live

    builtin = ", builtin" if report.builtin else ""
    where = f"{report.declared_in}, " if report.declared_in and report.declared_in.rpartition("/")[2] == "Kptfile" else ""
    if report.error and live.cancelled():
        return f"[interrupted] {name} ({where}{report.duration:.2f}s{builtin})"
    if report.error:
        return f"[failed] {name} ({where}{report.duration:.2f}s{builtin})" + (f": {report.error}" if reason else "")
    cached = "cached, " if report.cached else ""
    return f"[ok] {name} ({where}{report.duration:.2f}s{builtin}, {cached}{changes_text(report)})"


def file_lines(summary: RunSummary) -> list[str]:
    """`created app/x.yaml`, one line per file written (or, with --check, that would be)."""
    words = {"created": "would create", "updated": "would update", "deleted": "would delete"} if summary.check else {}
    return [f"{words.get(action, action)} {path}" for action in ("created", "updated", "deleted") for path in summary.files(action)]
