"""What a run tells whoever watches it: a function planned, started, writing to stderr,
transforming, finished with its report. The pipeline emits these; the displays in
orchestrator.report, the lineage tracker and a library caller's own recorder listen. Both sides
import this module, and neither imports the other."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from .merge.origin import Changes
    from .select.functions import FunctionSpec


@dataclass
class FunctionReport:
    """What one function did: the JSON/YAML results output and the progress display read this."""

    name: str
    kind: str
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
            ("image" if self.kind == "container" else "exec"): self.name,
            **({"declaredIn": self.declared_in} if self.declared_in else {}),
            "exitCode": self.exit_code,
            "duration": round(self.duration, 3),
            "results": self.results,
            "changes": {"added": self.added, "changed": self.changed, "removed": self.removed},
            **({"cached": True} if self.cached else {}),
            **({"builtin": True} if self.builtin else {}),
            **({"error": self.error} if self.error else {}),
        }


class Events(Protocol):
    """Where progress goes: the CLI's displays (orchestrator.report), the lineage tracker
    (orchestrator.merge.origin), or whatever a library caller records."""

    def planned(self, specs: list[FunctionSpec]) -> None: ...
    def started(self, spec: FunctionSpec) -> None: ...
    def stderr(self, spec: FunctionSpec, line: str) -> None: ...
    def transformed(self, spec: FunctionSpec, changes: Changes) -> None: ...
    def finished(self, spec: FunctionSpec, report: FunctionReport) -> None: ...
