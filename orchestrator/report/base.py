"""What every display shares: the run's events (orchestrator.events) as no-ops, how loud it is,
and the lines it writes about a function's results."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..events import Events, RunSummary

if TYPE_CHECKING:
    from ..events import FunctionReport
    from ..merge.origin import Changes, Tracker
    from ..select.functions import FunctionSpec

__all__ = ["HELD_LINES", "Display", "Recorder", "RunSummary", "changes_text", "describe"]


#: stderr lines a display holds back (to show if the function fails): the last ones, where the
#: error is; a function flooding stderr must not grow fnrun's memory.
HELD_LINES = 200


def changes_text(report: FunctionReport) -> str:
    """`1 added, 2 changed` (only what is non-zero), or `no changes`."""
    parts = [f"{n} {what}" for n, what in ((report.added, "added"), (report.changed, "changed"), (report.removed, "removed")) if n]
    return ", ".join(parts) or "no changes"


class Display(Events):
    """The command line's listener: the run's events, shown as quietly or verbosely as asked.
    Subclasses override what they show."""

    def __init__(self, quiet: bool = False, verbose: bool = False) -> None:
        self.quiet = quiet
        self.verbose = verbose


class Recorder(Events):
    """Between the pipeline and the display: forwards every event, keeps each function's report
    in the summary (a failed run has no Outcome to give them), and feeds the lineage tracker."""

    def __init__(self, display: Events, summary: RunSummary, tracker: Tracker | None = None) -> None:
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
