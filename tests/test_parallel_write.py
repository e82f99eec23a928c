"""Big write-backs render their files in forked workers: the bytes must be exactly what one
process writes, the fallback counts must add up, and an error in a worker must reach the user as
the same one-line error."""

from __future__ import annotations

import copy
import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
from gen_package import generate  # noqa: E402

from orchestrator.errors import InputError
from orchestrator.read.package import read_package
from orchestrator.resource import Resource
from orchestrator.write import parallel, writeback
from orchestrator.yamlio import textedit


def labelled(resources: list[Resource]) -> list[Resource]:
    """Every resource with a label added and, every third one, a scalar changed (the edits of a
    set-labels and a set-namespace), plus one whose comments the round trip must keep."""
    out = []
    for i, resource in enumerate(resources):
        data = copy.deepcopy(resource.data)
        data["metadata"].setdefault("labels", {})["team"] = "platform"
        if i % 3 == 0:
            data["metadata"]["namespace"] = "prod"
        out.append(resource.replaced(data))
    return out


def plan_with(workers: str, package_dir: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[dict[str, bytes | None], dict[str, int]]:
    monkeypatch.setenv("FNRUN_WRITE_WORKERS", workers)
    textedit.counts.clear()
    package = read_package(package_dir)
    plan = writeback.plan(package_dir, labelled(package.resources), package)
    return {change.path: change.new for change in plan.changes}, dict(textedit.counts)


def test_workers_write_the_same_bytes_as_one_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    generate(tmp_path, 120, 5)
    serial, serial_counts = plan_with("1", tmp_path, monkeypatch)
    forked, forked_counts = plan_with("3", tmp_path, monkeypatch)
    assert len(serial) == 120
    assert forked == serial
    assert list(forked) == list(serial)  # the plan's order too
    assert forked_counts == serial_counts and sum(serial_counts.values()) == 600


def test_big_plans_fork_by_default_and_small_ones_do_not(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FNRUN_WRITE_WORKERS", raising=False)
    assert parallel.workers_for(10) == 1
    assert parallel.workers_for(parallel.MIN_RESOURCES) == min(parallel.MAX_WORKERS, len(os.sched_getaffinity(0)))
    monkeypatch.setenv("FNRUN_WRITE_WORKERS", "1")
    assert parallel.workers_for(10**6) == 1


def test_shares_cover_every_file_once_in_order() -> None:
    for weights, workers in (([1] * 10, 3), ([50, 1, 1, 1, 1, 1], 2), ([5], 4), ([1, 1], 8)):
        shares = parallel._shares(weights, workers)
        assert len(shares) <= workers
        assert [i for start, end in shares for i in range(start, end)] == list(range(len(weights)))


def test_an_error_in_a_worker_is_the_same_one_line_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def render(path: str) -> bytes:
        if path == "f7":
            raise InputError(f"{path}: cannot render", exit_code=3)
        return path.encode()

    paths = [f"f{i}" for i in range(10)]
    with pytest.raises(InputError) as caught:
        parallel.render_all(paths, [1] * 10, render, workers=2)
    assert str(caught.value) == "f7: cannot render" and caught.value.exit_code == 3
    assert parallel.render_all(paths[:7], [1] * 7, render, workers=2) == {p: p.encode() for p in paths[:7]}
