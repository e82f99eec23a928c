"""A call whose turn has come is never starved by the next call started ahead of its turn
(warm.spawn): with one container for the image (an SDK image in one pipeline), the spawner must
not lend that container's slot to the later call while the earlier one has not got it yet — the
later call's process would wait for its stdin and the earlier call for the slot, for ever.

The interleaving that hung `fnrun render` now and then (the spawner's start of the next call
between the step's claim and its acquire) is forced here with the real pool and real containers:
the step's acquire first lets the pool's background thread finish what the claim queued."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator

import docker
import pytest
import yaml

from orchestrator.runtimes.container.runtime import ContainerRuntime
from orchestrator.runtimes.container.settings import LABEL_PID
from orchestrator.runtimes.container.warm.plan import Plan, Planned, plan
from orchestrator.runtimes.container.warm.pool import Warm, WarmPool
from orchestrator.runtimes.container.warm.runtime import WarmRuntime
from orchestrator.runtimes.container.warm.spawn import Spawner
from orchestrator.runtimes.protocol import Invocation, Sandbox
from testing.pipeline_helpers import test_images  # noqa: F401

IMAGE = "fnrun-test/sdkprobe:v1"
BOUND = 120.0  # seconds: far beyond a warm call on a loaded machine; a starved call never ends
STDIN = yaml.safe_dump({"apiVersion": "config.kubernetes.io/v1", "kind": "ResourceList", "items": []}).encode()


@pytest.fixture
def pool(test_images: None) -> Iterator[WarmPool]:  # noqa: F811
    warm = WarmPool(per_image=2)
    try:
        yield warm
    finally:
        warm.close()  # a starved acquire (without the fix) returns None here: the thread ends cold
    left = docker.from_env().containers.list(all=True, filters={"label": [f"{LABEL_PID}={os.getpid()}", "fnrun.warm=1"]})
    assert left == [], "the pool removed every container it started"


def steps() -> list[tuple[int, Planned]]:
    """Two steps calling the SDK image, as one pipeline's (each its own call)."""
    planned = []
    for key in (0, 1):
        call = Invocation(name=IMAGE, image=IMAGE, env={"STEP": str(key)}, sandbox=Sandbox(image_pull_policy="never"))
        found = plan(call)
        assert isinstance(found, Plan) and found.zygote
        planned.append((key, Planned(call, found, True)))
    assert planned[0][1].plan.key == planned[1][1].plan.key
    return planned


def run_bounded(runtime: WarmRuntime, call: Invocation) -> list[object]:
    """The step's run in a thread, waited for at most BOUND seconds; what it returned or raised."""
    outcome: list[object] = []

    def step() -> None:
        try:
            outcome.append(runtime.run(call, STDIN))
        except BaseException as err:  # noqa: BLE001 - reported by the assertion below
            outcome.append(err)

    thread = threading.Thread(target=step, name="fnrun-test-step", daemon=True)
    thread.start()
    thread.join(BOUND)
    assert not thread.is_alive(), "the step waits for the image's only slot, which a later call started ahead holds"
    return outcome


@pytest.mark.parametrize("ahead", [False, True], ids=["started-on-demand", "started-ahead"])
def test_the_next_call_started_ahead_never_takes_the_slot_of_a_call_whose_turn_came(
        pool: WarmPool, monkeypatch: pytest.MonkeyPatch, ahead: bool) -> None:
    planned = steps()
    key = planned[0][1].plan.key
    pool.limit(key, 1)  # as session.warmth sets it for an image with a zygote in one pipeline
    spawner = Spawner(pool, planned)
    try:
        if ahead:  # the render's case: the container started ahead (or the launcher's, adopted)
            pool.expect([planned[0][1].plan], paused=False)
        acquire = pool.acquire

        def after_the_spawner(wanted: Plan) -> Warm | None:
            """Acquire once the spawner's start that the claim queued has run (the losing race)."""
            queued = threading.Event()
            pool.background(queued.set)  # the pool's one background thread: after the claim's kick
            assert queued.wait(BOUND)
            return acquire(wanted)

        monkeypatch.setattr(pool, "acquire", after_the_spawner)
        runtimes = [WarmRuntime(pool, ContainerRuntime(), spawner, step, found) for step, found in planned]
        for (step, found), runtime in zip(planned, runtimes):
            outcome = run_bounded(runtime, found.invocation)
            assert len(outcome) == 1 and not isinstance(outcome[0], BaseException), outcome
            assert outcome[0].exit_code == 0, outcome[0].stderr  # type: ignore[attr-defined]
            spawner.forget(step)
        assert pool.served == 2, "both calls ran warm"
        assert pool.started == 1, "one container served both: the second call's process was started in it ahead"
    finally:
        spawner.close()
