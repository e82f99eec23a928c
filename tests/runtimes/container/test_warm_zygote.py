"""Warm calls of an image written with fnrun's SDK go through its fork server (the zygote,
functions/sdk/zygote.py): each call is a forked child, and still sees what a call in a fresh
container sees — no file, process, environment variable or module state of an earlier call —
ends with the code and messages a cold run would, and costs only itself when it misbehaves."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import replace

import docker
import pytest
import yaml

from orchestrator.runtimes.container.runtime import ContainerRuntime
from orchestrator.runtimes.container.settings import LABEL_PID
from orchestrator.runtimes.container.warm.plan import Plan, plan
from orchestrator.runtimes.container.warm.pool import WarmPool
from orchestrator.runtimes.container.warm.runtime import WarmRuntime
from orchestrator.runtimes.protocol import Invocation, RunOutput, Sandbox

IMAGE = "fnrun-test/sdkprobe:v1"
SANDBOX = Sandbox(image_pull_policy="never")
ZYGOTE = "functions.sdk.zygote"


@pytest.fixture
def pool(test_images: None) -> Iterator[WarmPool]:
    warm = WarmPool()
    try:
        yield warm
    finally:
        warm.close()
    left = docker.from_env().containers.list(all=True, filters={"label": [f"{LABEL_PID}={os.getpid()}", "fnrun.warm=1"]})
    assert left == [], "the pool removed every container it started"


def stdin(config: dict[str, str]) -> bytes:
    document = {"apiVersion": "config.kubernetes.io/v1", "kind": "ResourceList", "items": [],
                "functionConfig": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "fn"}, "data": config}}
    return yaml.safe_dump(document).encode()


def probed(output: RunOutput) -> dict[str, str]:
    assert output.stdout, output.stderr
    items = yaml.safe_load(output.stdout)["items"]
    return next(item["data"] for item in items if item["metadata"]["name"] == "sdk-probe")


def test_the_image_s_calls_are_forked_by_its_zygote(pool: WarmPool) -> None:
    call = Invocation(name=IMAGE, image=IMAGE, sandbox=SANDBOX)
    found = plan(call)
    assert isinstance(found, Plan)
    assert found.zygote == ("python3", "-m", ZYGOTE, "sdkprobe")
    seen = probed(WarmRuntime(pool, ContainerRuntime()).run(call, stdin({})))
    assert ZYGOTE in seen["parent"], "the call was forked by the zygote"
    assert found.zygote_for({"PYTHONHASHSEED": "0"}) == () and found.zygote_for({"LANG": "C"}) == ()
    assert found.zygote_for({"MY_SETTING": "1"}) == found.zygote


def test_a_second_call_sees_what_a_fresh_container_sees(pool: WarmPool) -> None:
    warm = WarmRuntime(pool, ContainerRuntime())
    first = Invocation(name=IMAGE, image=IMAGE, env={"FIRST": "1"}, sandbox=SANDBOX)
    second = replace(first, env={"SECOND": "2"}, args=("one", "two"))
    left = warm.run(first, stdin({"leave": "true", "envs": "FIRST"}))
    assert left.exit_code == 0, left.stderr
    asked = stdin({"envs": "FIRST,SECOND,LEFT_BY_SDKPROBE"})
    again, fresh = warm.run(second, asked), ContainerRuntime().run(second, asked)
    assert pool.started == 1, "both calls ran in one container"
    seen, cold = probed(again), probed(fresh)
    assert ZYGOTE in seen.pop("parent") and cold.pop("parent") == "<none>"
    assert seen == cold
    assert seen["tmpListing"] == seen["shmListing"] == "" and seen["strays"] == "0"
    assert seen["moduleState"] == "1", "the module state the first call changed did not reach the second"
    assert seen["env.FIRST"] == seen["env.LEFT_BY_SDKPROBE"] == "<unset>" and seen["env.SECOND"] == "2"
    assert seen["argv"] == "one,two" and seen["main"] == "sdkprobe.py"
    assert seen["dumpable"] == "1" and seen["stdoutSeekable"] == "false"
    assert seen["readableOthers"] == "0", "the call could read no other process (the zygote is not dumpable)"


def test_exit_codes_messages_and_exceptions_are_the_cold_ones(pool: WarmPool) -> None:
    warm = WarmRuntime(pool, ContainerRuntime())
    call = Invocation(name=IMAGE, image=IMAGE, sandbox=SANDBOX)
    for config in ({"exit": "3"}, {"raise": "true"}):
        lines: list[str] = []
        got = warm.run(call, stdin(config), lines.append)
        cold = ContainerRuntime().run(call, stdin(config))
        assert got.exit_code == cold.exit_code != 0
        assert got.stderr.splitlines()[-1] == cold.stderr.splitlines()[-1], got.stderr
        assert lines and lines[-1] == got.stderr.splitlines()[-1]
        if config.get("exit"):
            assert probed(got) | {"parent": ""} == probed(cold) | {"parent": ""}
    assert pool.started == 1, "a function's own failure keeps its container"


def test_a_call_that_kills_the_zygote_still_ends_and_the_next_gets_a_new_one(pool: WarmPool) -> None:
    warm = WarmRuntime(pool, ContainerRuntime())
    call = Invocation(name=IMAGE, image=IMAGE, sandbox=SANDBOX)
    killer = warm.run(call, stdin({"killOthers": "true"}))
    assert killer.exit_code == 0, killer.stderr
    assert probed(killer)["moduleState"] == "1"
    after = warm.run(call, stdin({}))
    assert after.exit_code == 0 and ZYGOTE in probed(after)["parent"]
    assert pool.started == 1


@pytest.mark.parametrize("tampered, containers", [("zygote", 1), ("pid1", 2), ("both", 2)])
def test_limits_and_scheduling_a_call_changes_in_the_helper_or_the_zygote_reach_no_later_call(
    pool: WarmPool, tampered: str, containers: int,
) -> None:
    """A call may lower the open-files limit, raise the nice value and narrow the CPUs of processes
    of its own user: the zygote (replaced before the next call) or PID 1 (its container replaced)."""
    warm = WarmRuntime(pool, ContainerRuntime())
    call = Invocation(name=IMAGE, image=IMAGE, sandbox=SANDBOX)
    assert warm.run(call, stdin({"tamper": tampered})).exit_code == 0
    seen, cold = probed(warm.run(call, stdin({}))), probed(ContainerRuntime().run(call, stdin({})))
    assert ZYGOTE in seen.pop("parent") and cold.pop("parent") == "<none>"
    assert seen == cold
    assert pool.started == containers
