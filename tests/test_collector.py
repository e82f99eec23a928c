"""The cyclic collector's one owner (orchestrator/collector.py): off while held, and put back as
the first holder found it only when the last one leaves."""

from __future__ import annotations

import gc
import threading
from pathlib import Path

from orchestrator import api, collector


def test_held_it_is_off_and_left_it_is_back_on() -> None:
    assert gc.isenabled()
    with collector.paused():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_a_nested_holder_leaving_does_not_switch_it_on_under_the_outer_one() -> None:
    with collector.paused():
        with collector.paused():
            pass
        assert not gc.isenabled()
    assert gc.isenabled()


def test_a_process_that_switched_it_off_keeps_it_off() -> None:
    gc.disable()
    try:
        with collector.paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_holders_in_other_threads_count_until_the_last_leaves() -> None:
    """Two runs at once in one process: the first to finish leaves the collector off for the other."""
    entered, first_left, second_may_leave = threading.Event(), threading.Event(), threading.Event()
    seen: list[bool] = []

    def second() -> None:
        with collector.paused():
            entered.set()
            first_left.wait(5)
            seen.append(gc.isenabled())
            second_may_leave.wait(5)

    thread = threading.Thread(target=second)
    with collector.paused():
        thread.start()
        assert entered.wait(5)
    first_left.set()
    second_may_leave.set()
    thread.join(5)
    assert seen == [False]
    assert gc.isenabled()


def test_an_entry_point_holds_it_for_its_work_and_gives_it_back(tmp_path: Path) -> None:
    (tmp_path / "cm.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n")
    assert "name: a" in api.source(tmp_path)
    assert gc.isenabled()
