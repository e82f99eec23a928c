"""Big packages are read, decoded and written back by forked workers (orchestrator.workers): the
resources, the decoded items and the bytes written must be exactly what one process gives, and an
error in a worker must reach the user as the same one-line error (the first one in file order)."""

from __future__ import annotations

import copy
import os
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
from gen_package import generate

from orchestrator import procstat, workers
from orchestrator.errors import FnrunError, InputError
from orchestrator.read.package import read_package
from orchestrator.resource import Resource
from orchestrator.run import resourcelist
from orchestrator.write import writeback


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


def plan_with(count: int, package_dir: Path) -> dict[str, bytes | None]:
    package = read_package(package_dir, workers=count)
    plan = writeback.plan(package_dir, labelled(package.resources), package, workers=count)
    return {change.path: change.new for change in plan.changes}


def test_workers_write_the_same_bytes_as_one_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    generate(tmp_path, 120, 5)
    serial = plan_with(1, tmp_path)
    forked = plan_with(3, tmp_path)
    assert len(serial) == 120
    assert forked == serial
    assert list(forked) == list(serial)  # the plan's order too


def test_big_jobs_fork_by_default_and_small_ones_do_not(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FNRUN_WORKERS", "2")  # read at the edge only: the count is what its caller hands down
    assert workers.count(10, workers.MIN_BYTES_TO_SHARE, None) == 1
    cores = min(workers.MAX_WORKERS, len(os.sched_getaffinity(0)))
    assert workers.count(workers.MIN_BYTES_TO_SHARE, workers.MIN_BYTES_TO_SHARE, None) == cores
    assert workers.count(10**9, 1, 1) == 1
    assert workers.count(10, 10**9, 3) == 3


def test_shares_cover_every_unit_once_in_order() -> None:
    for weights, count in (([1] * 10, 3), ([50, 1, 1, 1, 1, 1], 2), ([5], 4), ([1, 1], 8)):
        shares = workers.shares_of(weights, count)
        assert len(shares) <= count
        assert [i for start, end in shares for i in range(start, end)] == list(range(len(weights)))


def test_an_error_in_a_worker_is_the_same_one_line_error() -> None:
    paths = [f"f{i}" for i in range(10)]

    def job(start: int, end: int) -> list[str]:
        for path in paths[start:end]:
            if path in ("f7", "f9"):
                raise InputError(f"{path}: cannot render", exit_code=3)
        return paths[start:end]

    with pytest.raises(InputError) as caught:
        workers.fork_map(job, [1] * 10, 3)
    assert str(caught.value) == "f7: cannot render" and caught.value.exit_code == 3  # the first in order
    assert workers.fork_map(job, [1] * 7, 2) == [paths[:4], paths[4:7]]


def test_jobs_shared_from_two_threads_each_get_their_own_results() -> None:
    """Units run at once (orchestrator/run/units.py) may each decode a big output or hand back a
    big step: the workers of one must never run the other's job."""
    from concurrent.futures import ThreadPoolExecutor

    def job_of(tag: str):
        def job(start: int, end: int) -> list[str]:
            return [f"{tag}{i}" for i in range(start, end)]
        return job

    with ThreadPoolExecutor(4) as pool:
        runs = [pool.submit(workers.fork_map, job_of(tag), [1] * 6, 2) for tag in "abcdabcd"]
        outcomes = [run.result() for run in runs]
    for tag, outcome in zip("abcdabcd", outcomes):
        assert [unit for part in outcome for unit in part] == [f"{tag}{i}" for i in range(6)]


def test_the_first_share_runs_here_and_the_others_in_children() -> None:
    def job(start: int, end: int) -> list[tuple[int, int]]:
        return [(unit, os.getpid()) for unit in range(start, end)]

    parts = workers.fork_map(job, [1] * 9, 3)
    assert [unit for part in parts for unit, _ in part] == list(range(9))
    pids = [{pid for _, pid in part} for part in parts]
    assert pids[0] == {os.getpid()} and len(set.union(*pids)) == 3


def test_a_worker_that_dies_is_a_one_line_error_and_no_child_is_left(tmp_path: Path) -> None:
    def job(start: int, end: int) -> list[int]:
        if start > 0:
            os._exit(3)  # a crash in a child: no result, whatever the reason
        return list(range(start, end))

    before = children()
    with pytest.raises(FnrunError, match=r"^a worker process stopped without a result \(exit 3\); nothing was written$"):
        workers.fork_map(job, [1] * 4, 2)
    assert children() <= before  # every worker reaped, none left running or as a zombie


def test_an_interrupt_in_this_process_s_share_stops_the_children() -> None:
    def job(start: int, end: int) -> list[int]:
        if start == 0:
            raise KeyboardInterrupt
        time.sleep(60)
        return []

    before = children()
    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        workers.fork_map(job, [1] * 4, 2)
    assert time.monotonic() - started < 30  # the child was killed, not waited for
    assert children() <= before  # and reaped


def children() -> set[int]:
    """This process's children, zombies included (other tests may leave long-lived ones, such as
    the builtins' fork server, so "no child at all" would test them, not fork_map)."""
    return {pid for pid, stat in procstat.processes().items() if stat.ppid == os.getpid()}


def snapshot(resources: list[Resource]) -> list[tuple[dict, str, str | None]]:
    return [(r.data, r.text, r.body) for r in resources]


def test_workers_read_the_same_package_as_one_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    generate(tmp_path, 60, 5)
    (tmp_path / "odd.yaml").write_text("# only a comment\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\r\n")
    serial = read_package(tmp_path, workers=1)
    forked = read_package(tmp_path, workers=3)
    assert snapshot(forked.resources) == snapshot(serial.resources) and len(serial.resources) == 301
    assert forked.files == serial.files and list(forked.files) == list(serial.files)


def test_the_first_bad_file_is_named_whichever_worker_reads_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    generate(tmp_path, 40, 2)
    files = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*.yaml"))
    for rel in (files[25], files[35]):
        (tmp_path / rel).write_text("apiVersion: v1\nkind: [unclosed\n")
    errors = []
    for count in (1, 3):
        with pytest.raises(InputError) as caught:
            read_package(tmp_path, workers=count)
        errors.append(str(caught.value))
    assert errors[0] == errors[1] and errors[0].startswith(files[25] + ":")


def test_workers_decode_a_big_output_as_one_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    generate(tmp_path, 40, 5)
    package = read_package(tmp_path)
    content = resourcelist.encode(package.resources, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "fc"}})
    monkeypatch.setattr(workers, "MIN_BYTES_TO_SHARE", 1)
    serial = resourcelist.decode(content, "output", workers=1)
    forked = resourcelist.decode(content, "output", workers=2)
    assert snapshot(forked.items) == snapshot(serial.items) and len(serial.items) == 200
    assert forked.function_config == serial.function_config and forked.results == serial.results
    broken = content.replace("kind: Service", "kind: [Service", 1)  # not fnrun's layout any more: the general path says where
    with pytest.raises(InputError) as caught:
        resourcelist.decode(broken, "output", workers=2)
    with pytest.raises(InputError) as again:
        resourcelist.decode(broken, "output", workers=1)
    assert str(caught.value) == str(again.value)


def test_a_child_stuck_on_a_lock_another_thread_held_at_the_fork_has_its_share_done_here(monkeypatch: pytest.MonkeyPatch) -> None:
    """The lock is held by a thread that does not exist in the child: it would wait for ever. The
    parent sees it sleep without CPU time, kills it and does its share itself."""
    import threading

    monkeypatch.setattr(workers, "STUCK_AFTER", 0.5)
    lock, held, release = threading.Lock(), threading.Event(), threading.Event()

    def hold() -> None:
        with lock:
            held.set()
            release.wait()

    holder = threading.Thread(target=hold, daemon=True)
    holder.start()
    held.wait()
    parent = os.getpid()

    def job(start: int, end: int) -> list[int]:
        if os.getpid() != parent:
            lock.acquire()  # in a child only: its holder did not come along
        return list(range(start, end))

    try:
        assert workers.fork_map(job, [1] * 10, 2) == [list(range(0, 5)), list(range(5, 10))]
    finally:
        release.set()
        holder.join()
    assert not workers._children
