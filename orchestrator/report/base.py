"""What every display shares: the pipeline's events as no-ops, and the end-of-run summary."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..events import FunctionReport
    from ..merge.origin import Changes, Tracker
    from ..select.functions import FunctionSpec
    from ..write.writeback import WritePlan


#: stderr lines a display holds back (to show if the function fails): the last ones, where the
#: error is; a function flooding stderr must not grow fnrun's memory.
HELD_LINES = 200


@dataclass
class RunSummary:
    """The numbers the summary line and the results document give: what ran, what changed, what
    was (or, with --check, would be) written, and how long it all took."""

    reports: list[FunctionReport] = field(default_factory=list)
    plan: WritePlan | None = None
    written: bool = False
    check: bool = False
    elapsed: float = 0.0
    root: Path | None = None
    command: str = "run"  # what the summary line calls itself: run | render

    @property
    def resources_changed(self) -> int:
        return sum(r.added + r.changed + r.removed for r in self.reports)

    def files(self, action: str) -> list[str]:
        """Package-relative paths the plan creates, updates or deletes."""
        if self.plan is None:
            return []
        if action == "created":
            return [c.path for c in self.plan.changes if c.old is None]
        if action == "deleted":
            return [c.path for c in self.plan.changes if c.new is None]
        return [c.path for c in self.plan.changes if c.old is not None and c.new is not None]

    def line(self) -> str:
        """`3 functions, 4 resources changed, 2 files written (1 created, ...) in 1.52s`."""
        count = len(self.reports)
        parts = [f"{count} function{'s' if count != 1 else ''}", f"{self.resources_changed} resource{'s' if self.resources_changed != 1 else ''} changed"]
        if self.plan is not None:
            files = len(self.plan.changes)
            verb = "would change" if self.check else "written" if self.written else "to write"
            parts.append(f"{files} file{'s' if files != 1 else ''} {verb} ({self.plan.summary()})")
        return f"{', '.join(parts)} in {self.elapsed:.2f}s"


def changes_text(report: FunctionReport) -> str:
    """`1 added, 2 changed` (only what is non-zero), or `no changes`."""
    parts = [f"{n} {what}" for n, what in ((report.added, "added"), (report.changed, "changed"), (report.removed, "removed")) if n]
    return ", ".join(parts) or "no changes"


class Display:
    """A pipeline event sink that also shows the end of a run. Subclasses override what they show."""

    def __init__(self, quiet: bool = False, verbose: bool = False) -> None:
        self.quiet = quiet
        self.verbose = verbose

    def planned(self, specs: list[FunctionSpec]) -> None:
        pass

    def started(self, spec: FunctionSpec) -> None:
        pass

    def stderr(self, spec: FunctionSpec, line: str) -> None:
        pass

    def transformed(self, spec: FunctionSpec, changes: Changes) -> None:
        pass

    def finished(self, spec: FunctionSpec, report: FunctionReport) -> None:
        pass

    def summary(self, summary: RunSummary) -> None:
        """The run got to the end (written, or checked); called before a --check failure is raised."""

    def close(self) -> None:
        """Always called last, also after an error or Ctrl-C: give the terminal back."""


class Recorder(Display):
    """Between the pipeline and the display: forwards every event, keeps each function's report
    in the summary (a failed run has no Outcome to give them), and feeds the lineage tracker."""

    def __init__(self, display: Display, summary: RunSummary, tracker: Tracker | None = None) -> None:
        super().__init__(getattr(display, "quiet", False), getattr(display, "verbose", False))
        self.display, self.record, self.tracker = display, summary, tracker

    def planned(self, specs: list[FunctionSpec]) -> None:
        self.display.planned(specs)

    def started(self, spec: FunctionSpec) -> None:
        self.display.started(spec)

    def stderr(self, spec: FunctionSpec, line: str) -> None:
        self.display.stderr(spec, line)

    def transformed(self, spec: FunctionSpec, changes: Changes) -> None:
        if self.tracker is not None:
            self.tracker.transformed(spec, changes)
        self.display.transformed(spec, changes)

    def finished(self, spec: FunctionSpec, report: FunctionReport) -> None:
        self.record.reports.append(report)
        self.display.finished(spec, report)


def describe(result: dict) -> str:
    """One readable line: `error: message (Deployment/web in app/deploy.yaml, field spec.replicas)`."""
    where = []
    ref = result.get("resourceRef")
    if isinstance(ref, dict) and ref.get("name"):
        namespace = f"{ref['namespace']}/" if ref.get("namespace") else ""
        where.append(f"{ref.get('kind', '?')}/{namespace}{ref['name']}")
    file = result.get("file")
    if isinstance(file, dict) and file.get("path"):
        where.append(f"in {file['path']}" + (f"[{file['index']}]" if file.get("index") not in (None, 0) else ""))
    field = result.get("field")
    if isinstance(field, dict) and field.get("path"):
        where.append(f"field {field['path']}")
    suffix = f" ({' '.join(where)})" if where else ""
    return f"{result['severity']}: {result['message']}{suffix}"
