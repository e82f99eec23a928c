"""Units run at once (orchestrator/run/units.py) are committed only while the resources in their
scope are the very ones they ran on; the main thread asks that at every short wait and at each
commit, and remembers the answer per unit and list of resources. Over random units (nested and
sibling scopes, the whole package, main-thread units) whose functions may put a resource into
another unit's directory or drop one, every verdict is the one worked out afresh, and the run
ends as the serial run does."""

from __future__ import annotations

import threading
import time
from typing import Any

from hypothesis import given, settings, strategies as st

from orchestrator.events import Events, FunctionReport
from orchestrator.kinds import Kind
from orchestrator.merge import scope
from orchestrator.resource import Resource
from orchestrator.run import units
from orchestrator.run.units import Executed, Unit, in_unit_scope, run_units
from orchestrator.select.functions import FunctionSpec
from testing.sizing import examples

SCOPES = ("a", "b", "a/c", "b/d", "")


def resource(path: str, name: str) -> Resource:
    return Resource({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "annotations": {"internal.config.kubernetes.io/path": path}}})


class Checked(units._Parallel):
    """The parallel run, each verdict held to the one worked out afresh from both lists."""

    verdicts: list[bool]

    def _still_valid(self, index: int, snapshot: list[Resource], resources: list[Resource]) -> bool:
        verdict = super()._still_valid(index, snapshot, resources)
        directory = self.units[index].scope
        fresh = snapshot is resources or [id(r) for r in in_unit_scope(directory, snapshot)] == [id(r) for r in in_unit_scope(directory, resources)]
        assert verdict == fresh, (index, directory)
        self.verdicts.append(verdict)
        return verdict


class Shown(Events):
    def __init__(self) -> None:
        self.order: list[str] = []

    def finished(self, spec: FunctionSpec, report: FunctionReport) -> None:
        self.order.append(report.name)


def plan(draw: st.DrawFn) -> tuple[list[Unit], list[FunctionSpec], list[dict[str, Any]]]:
    count = draw(st.integers(2, 5))
    scopes = [draw(st.sampled_from(SCOPES)) for _ in range(count)]
    made = [Unit(s or None, draw(st.integers(0, 4)) > 0) for s in scopes]
    specs = [FunctionSpec(kind=Kind.CONTAINER, image=f"fn{n}", declared_in=f"{s}/Kptfile" if s else None) for n, s in enumerate(scopes)]
    acts = [{"put": draw(st.sampled_from((None, *SCOPES[:4]))), "drop": draw(st.booleans()), "pause": draw(st.sampled_from((0, 0.001, 0.01, 0.03)))}
            for _ in range(count)]
    return made, specs, acts


def runner(specs: list[FunctionSpec], acts: list[dict[str, Any]]) -> Any:
    def execute(index: int, current: list[Resource], shown: Events, cancel: threading.Event) -> Executed:
        items, positions = scope.split(specs[index], current)
        output = list(items)
        time.sleep(acts[index]["pause"])  # units finish in varied orders: later ones run ahead
        if acts[index]["drop"] and output:
            output.pop()
        if acts[index]["put"] is not None:  # maybe into another unit's directory
            output.append(resource(f"{acts[index]['put']}/from-{index}.yaml", f"from-{index}"))
        shown.finished(specs[index], FunctionReport(f"fn{index}", Kind.CONTAINER))
        return Executed(scope.merge_back(current, positions, output), [(specs[index], output)], index)
    return execute


def start() -> list[Resource]:
    return [resource(f"{d}/x.yaml", d.replace("/", "-")) for d in SCOPES[:4]] + [resource("top.yaml", "top")]


@settings(max_examples=examples(60), deadline=None)
@given(st.data(), st.integers(2, 4))
def test_verdicts_are_the_fresh_ones_and_the_run_the_serial_one(data: st.DataObject, jobs: int) -> None:
    made, specs, acts = data.draw(st.composite(plan)(), label="units")
    execute = runner(specs, acts)

    def run(parallel: bool) -> tuple[list[tuple[str | None, str]], list[str], list[int], list[bool]]:
        shown, committed = Shown(), []
        commit = lambda index, done: committed.append(done.payload)  # noqa: E731
        if parallel:
            checked = Checked(made, shown, execute, commit, jobs, threading.Event())
            checked.verdicts = []
            final = checked.run(start())
            verdicts = checked.verdicts
        else:
            final, verdicts = run_units(made, start(), shown, execute, commit, 1), []
        return [(r.path, r.data["metadata"]["name"]) for r in final], shown.order, committed, verdicts

    serial, parallel = run(False), run(True)
    assert parallel[:3] == serial[:3]


def test_a_sibling_that_ran_on_what_changed_is_found_out() -> None:
    """The verdict that sends a unit to run again: `b` runs ahead while `a`, before it, puts a
    resource into `b`'s directory; `b`'s later verdicts (against lists made since) still see it."""
    specs = [FunctionSpec(kind=Kind.CONTAINER, image=f"fn{n}", declared_in=f"{d}/Kptfile") for n, d in enumerate("abc")]
    b_ran = threading.Event()
    ran: dict[int, int] = {0: 0, 1: 0, 2: 0}

    def execute(index: int, current: list[Resource], shown: Events, cancel: threading.Event) -> Executed:
        items, positions = scope.split(specs[index], current)
        ran[index] += 1
        output = list(items)
        if index == 0:
            b_ran.wait(5)  # b has run ahead on the old resources
            output.append(resource("b/from-a.yaml", "from-a"))
        elif index == 1:
            b_ran.set()
        shown.finished(specs[index], FunctionReport(f"fn{index}", Kind.CONTAINER))
        return Executed(scope.merge_back(current, positions, output), [(specs[index], output)], index)

    checked = Checked([Unit(d, True) for d in "abc"], Shown(), execute, lambda i, d: None, 3, threading.Event())
    checked.verdicts = []
    final = checked.run([resource(f"{d}/x.yaml", d) for d in "abc"])
    assert False in checked.verdicts and ran[1] == 2 and ran[2] == 1
    assert [r.path for r in final] == ["a/x.yaml", "b/from-a.yaml", "b/x.yaml", "c/x.yaml"]
