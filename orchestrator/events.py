"""What a run tells whoever watches it: a function planned, started, writing to stderr,
transforming, finished with its report; then the run's summary or the error that ended it, and
its close. The pipeline and the library's entry points emit these; the displays in
orchestrator.report, the lineage tracker and a library caller's own listener (a subclass of
`Events`) listen. Both sides import this module, and neither imports the other."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from .kinds import Kind

if TYPE_CHECKING:
    from .errors import FnrunError
    from .merge.origin import Changes
    from .select.functions import FunctionSpec
    from .write.writeback import WritePlan


@dataclass
class FunctionReport:
    """What one function did: the JSON/YAML results output and the progress display read this."""

    name: str
    kind: Kind
    declared_in: str | None = None
    exit_code: int = 0
    duration: float = 0.0
    results: list[dict] = field(default_factory=list)
    added: int = 0
    changed: int = 0
    removed: int = 0
    error: str | None = None
    cached: bool = False  # its output came from the result cache; no container started
    builtin: bool = False  # a catalog image's code ran in-process; no container started

    def as_dict(self) -> dict:
        return {
            ("image" if self.kind == Kind.CONTAINER else "exec"): self.name,
            **({"declaredIn": self.declared_in} if self.declared_in else {}),
            "exitCode": self.exit_code,
            "duration": round(self.duration, 3),
            "results": self.results,
            "changes": {"added": self.added, "changed": self.changed, "removed": self.removed},
            **({"cached": True} if self.cached else {}),
            **({"builtin": True} if self.builtin else {}),
            **({"error": self.error} if self.error else {}),
        }


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


class Events:
    """Where a run's progress goes: the CLI's displays (orchestrator.report), or whatever a
    library caller records. Every event is a no-op here; a listener overrides what it needs."""

    def planned(self, specs: list[FunctionSpec]) -> None:
        """The functions the run will call, in order, before the first starts."""

    def started(self, spec: FunctionSpec) -> None:
        """A function starts."""

    def stderr(self, spec: FunctionSpec, line: str) -> None:
        """A line the running function wrote to stderr."""

    def transformed(self, spec: FunctionSpec, changes: Changes) -> None:
        """A function's output merged into the package: what became of each item."""

    def finished(self, spec: FunctionSpec, report: FunctionReport) -> None:
        """A function ended, with its report (also when it failed)."""

    def summary(self, summary: RunSummary) -> None:
        """The run got to the end (written, or checked); called before a --check failure is raised."""

    def failed(self, err: FnrunError) -> None:
        """The error that ends the run, before it is raised to the caller."""

    def close(self) -> None:
        """Always called last, also after an error or Ctrl-C: give the terminal back."""
