"""`--results-format text|json|yaml`: the whole run as one document on stdout, for CI steps and
scripts (human lines stay on stderr). JSON and YAML carry the same fields; with --check or --diff
they also carry the diff, so stdout stays one parseable document."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from ..yamlio import fast
from .base import RunSummary, describe
from .plain import status_line

if TYPE_CHECKING:
    from ..errors import FnrunError

FORMATS = ("text", "json", "yaml")
API_VERSION = "fnrun.dev/v1alpha1"


def document(summary: RunSummary, error: FnrunError | None = None, diff: str | None = None) -> dict[str, Any]:
    """Per function: image or exec path, where it was declared, exit code, duration, results, and
    how many resources it added, changed and removed; then the files and the run's outcome."""
    doc: dict[str, Any] = {
        "apiVersion": API_VERSION,
        "kind": "FunctionResultList",
        "exitCode": error.exit_code if error is not None else 0,
    }
    if error is not None:
        doc["error"] = str(error)
    doc["items"] = [report.as_dict() for report in summary.reports]
    doc["summary"] = {
        "functions": len(summary.reports),
        "resourcesChanged": summary.resources_changed,
        "duration": round(summary.elapsed, 3),
        "check": summary.check,
        "written": summary.written,
        "files": {action: summary.files(action) for action in ("created", "updated", "deleted")},
    }
    if diff is not None:
        doc["diff"] = diff
    return doc


def render(fmt: str, summary: RunSummary, error: FnrunError | None = None, diff: str | None = None) -> str:
    if fmt == "text":
        return _text(summary, error)
    doc = document(summary, error, diff)
    if fmt == "json":
        return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
    return fast.dump(doc)


def _text(summary: RunSummary, error: FnrunError | None) -> str:
    """The results as the plain display prints them, without the functions' stderr."""
    lines = []
    for report in summary.reports:
        lines.append(status_line(report.name, report))
        lines += [f"  {describe(result)}" for result in report.results]
    lines.append(summary.line())
    if error is not None:
        lines.append(f"error: {error}")
    return "\n".join(lines) + "\n"
