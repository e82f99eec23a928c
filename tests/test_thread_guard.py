"""The suite's thread guard (tests/testing/thread_guard.py): a thread a test leaves running is
named, one that ends within the grace is not, and a wide fixture's thread is its own until the
fixture is torn down."""

from __future__ import annotations

import threading
from dataclasses import dataclass

import pytest

from testing import thread_guard
from testing.thread_guard import ThreadGuard, tasks


@dataclass
class _Fixture:
    """Stands for pytest's FixtureDef: set up while it holds a cached result."""

    cached_result: object = ("value", None, None)


def test_a_thread_left_running_is_named_and_one_that_ends_is_not(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(thread_guard, "GRACE", 0.2)
    guard = ThreadGuard()
    before = tasks()
    stop = threading.Event()
    left = threading.Thread(target=stop.wait, name="the-leftover")
    left.start()
    ending = threading.Thread(target=threading.Event().wait, args=(0.05,), name="ending-soon")
    ending.start()
    try:
        found = guard.left_behind(before)
        assert len(found) == 1 and "'the-leftover'" in found[0] and "Event.wait" in found[0], found
    finally:
        stop.set()
        left.join()
    assert guard.left_behind(before) == []


def test_a_wide_fixture_s_thread_is_allowed_until_its_teardown(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(thread_guard, "GRACE", 0.2)
    guard = ThreadGuard()
    fixture = _Fixture()
    before = tasks()
    stop = threading.Event()
    server = threading.Thread(target=stop.wait, name="fixture-server")
    server.start()
    try:
        guard.fixture_started(before, "server", fixture)
        assert guard.left_behind(before) == []
        fixture.cached_result = None  # torn down, and its thread still runs
        found = guard.left_behind(before)
        assert len(found) == 1 and "'fixture-server'" in found[0] and "started by fixture 'server'" in found[0], found
    finally:
        stop.set()
        server.join()
