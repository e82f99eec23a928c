"""kpt 1.0's record of a render in the root Kptfile: `status.conditions` (Rendered) and
`status.renderStatus` (each step's image or exec, exit code and results). Only the Kptfile's
value changes; the writer edits just those lines."""

from __future__ import annotations

import copy

from ..events import FunctionReport
from ..kinds import Kind
from ..resource import Resource
from .kptfile import Step


def with_status(kptfile: Resource, ran: list[tuple[Step, FunctionReport]], error: str | None) -> Resource:
    """The root Kptfile carrying this render's status."""
    data = copy.deepcopy(kptfile.data)
    condition = {"type": "Rendered", "status": "False" if error else "True", "reason": "RenderFailed" if error else "RenderSuccess"}
    if error:
        condition["message"] = error
    render_status: dict = {}
    for key, validator in (("mutationSteps", False), ("validationSteps", True)):
        steps = [_step(step, report) for step, report in ran if step.validator is validator]
        if steps:
            render_status[key] = steps
    if error:
        render_status["errorSummary"] = error
    status: dict = {"conditions": [condition]}
    if render_status:
        status["renderStatus"] = render_status
    data["status"] = status
    return kptfile.replaced(data)


def _step(step: Step, report: FunctionReport) -> dict:
    entry: dict = {}
    if step.name:
        entry["name"] = step.name
    entry["image" if report.kind == Kind.CONTAINER else "exec"] = report.name
    if report.error and report.exit_code in (0, -1) and not report.results:
        entry["executionError"] = report.error
    entry["exitCode"] = report.exit_code
    plain = [_item(r) for r in report.results if r.get("severity") != "error"]
    errors = [_item(r) for r in report.results if r.get("severity") == "error"]
    if plain:
        entry["results"] = plain
    if errors:
        entry["errorResults"] = errors
    return entry


def _item(result: dict) -> dict:
    """A result as kpt records it (its ResultItem's fields): what a function adds beyond them
    stays in --results-dir, so the Kptfile keeps passing kpt's schema (render.schema)."""
    from .schema import RESULT_ITEM, pruned

    item = pruned(result, RESULT_ITEM)
    return item if isinstance(item, dict) else result  # a dict pruned as a map is a dict
