"""Warm containers: a call in a container an earlier call used sees exactly what a call in a
fresh container sees, a call that leaves the container unfit costs only that container, and no
container outlives its pool. Speed is bench/bench_render.py's."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import docker
import pytest
import yaml

from orchestrator.errors import FunctionError
from orchestrator.runtimes.container.runtime import ContainerRuntime
from orchestrator.runtimes.container.settings import LABEL_PID
from orchestrator.runtimes.container.warm.plan import NoWarm, Plan, plan
from orchestrator.runtimes.container.warm.pool import WarmPool
from orchestrator.runtimes.container.warm.runtime import WarmRuntime
from orchestrator.runtimes.protocol import Invocation, Sandbox
from testing.pipeline_helpers import test_images  # noqa: F401
from testing.runtime_fixtures import require_base_image

SANDBOX = Sandbox(image_pull_policy="never")


@pytest.fixture
def pool() -> Iterator[WarmPool]:
    warm = WarmPool()
    try:
        yield warm
    finally:
        warm.close()
    assert mine() == [], "the pool removed every container it started"


def mine() -> list:
    return docker.from_env().containers.list(all=True, filters={"label": [f"{LABEL_PID}={os.getpid()}", "fnrun.warm=1"]})


def stdin(config: dict[str, str]) -> bytes:
    items = [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "given"}, "data": {"k": "v"}}]
    document = {"apiVersion": "config.kubernetes.io/v1", "kind": "ResourceList", "items": items,
                "functionConfig": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "fn"}, "data": config}}
    return yaml.safe_dump(document).encode()


def probed(output: bytes) -> dict[str, str]:
    items = yaml.safe_load(output)["items"]
    return next(item["data"] for item in items if item["metadata"]["name"] == "sandbox-probe")


def local(root: Path, name: str, files: dict[str, str]) -> Path:
    directory = root / name
    directory.mkdir(mode=0o755)
    for file, text in files.items():
        (directory / file).write_text(text)
    os.chmod(root, 0o755)
    return directory


def test_a_second_call_sees_what_a_fresh_container_sees(tmp_path: Path, pool: WarmPool, probe_image: str) -> None:
    first_dir = local(tmp_path, "first", {"fn.yaml": "first: config\n", "secret.txt": "first's\n"})
    second_dir = local(tmp_path, "second", {"fn.yaml": "second: config\n"})
    warm = WarmRuntime(pool, ContainerRuntime())
    first = Invocation(name=probe_image, image=probe_image, env={"FIRST": "1", "SHARED": "first"}, local_dir=first_dir, sandbox=SANDBOX)
    second = replace(first, env={"SECOND": "2"}, local_dir=second_dir)
    assert isinstance(plan(first), Plan) and plan(first).key == plan(second).key, "both calls share a container"

    left = warm.run(first, stdin({"leave": "true", "envs": "FIRST,SHARED"}))
    assert left.exit_code == 0, left.stderr
    assert probed(left.stdout)["localListing"] == "fn.yaml,secret.txt"
    again = warm.run(second, stdin({"envs": "FIRST,SHARED,SECOND"}))
    fresh = ContainerRuntime().run(second, stdin({"envs": "FIRST,SHARED,SECOND"}))
    assert pool.started == 1, "the second call ran in the container the first one used"
    assert again.exit_code == fresh.exit_code == 0, again.stderr
    seen, cold = probed(again.stdout), probed(fresh.stdout)
    assert seen == cold
    # what the first call left is gone, and the sandbox is the cold one's
    assert seen["tmpListing"] == "" and seen["shmListing"] == "" and seen["strays"] == "0"
    assert seen["localListing"] == "fn.yaml" and seen["localWrite"] == "EROFS" and seen["rootWrite"] == "EROFS"
    assert seen["env.FIRST"] == seen["env.SHARED"] == "<unset>" and seen["env.SECOND"] == "2"
    assert seen["network"] in ("ENETUNREACH", "EHOSTUNREACH") and seen["interfaces"] == "lo"
    assert seen["uid"] == "65534" and int(seen["capEff"], 16) == 0 and seen["noNewPrivs"] == "1"


def test_a_call_without_local_sees_no_local(tmp_path: Path, pool: WarmPool, probe_image: str) -> None:
    warm = WarmRuntime(pool, ContainerRuntime())
    call = Invocation(name=probe_image, image=probe_image, sandbox=SANDBOX)
    outputs = [warm.run(call, stdin({"leave": "true"})) for _ in range(2)]
    assert pool.started == 1
    assert probed(outputs[1].stdout)["localListing"] == "<missing>"
    assert probed(outputs[1].stdout) == probed(ContainerRuntime().run(call, stdin({})).stdout) | {"tmpListing": "", "strays": "0"}


def test_a_call_that_times_out_costs_only_its_container(tmp_path: Path, pool: WarmPool) -> None:
    base = require_base_image()
    warm = WarmRuntime(pool, ContainerRuntime())
    quick = Invocation(name="hangs", image=base, args=("python3", "-c", "import sys, time; sys.stdin.read(); time.sleep(60)"),
                       sandbox=replace(SANDBOX, timeout=2.0))
    with pytest.raises(FunctionError, match="timed out"):
        warm.run(quick, stdin({}))
    assert warm.run(replace(quick, args=("python3", "-c", "print('fine')"), sandbox=SANDBOX), b"").stdout == b"fine\n"
    assert pool.started == 2, "the timed-out call's container was discarded"


def test_a_failing_call_keeps_the_container_and_its_exit_code(pool: WarmPool) -> None:
    warm = WarmRuntime(pool, ContainerRuntime())
    fails = Invocation(name="fails", image=require_base_image(), args=("python3", "-c", "import sys; print('no', file=sys.stderr); sys.exit(3)"), sandbox=SANDBOX)
    lines: list[str] = []
    out = warm.run(fails, b"", lines.append)
    assert out.exit_code == 3 and lines == ["no"]
    assert warm.run(fails, b"").exit_code == 3
    assert pool.started == 1


def test_a_container_that_went_away_is_replaced(pool: WarmPool, probe_image: str) -> None:
    warm = WarmRuntime(pool, ContainerRuntime())
    call = Invocation(name=probe_image, image=probe_image, sandbox=SANDBOX)
    assert warm.run(call, stdin({})).exit_code == 0
    for found in mine():
        found.remove(force=True)  # as if it had ended on its own (its idle time ran out)
    assert warm.run(call, stdin({})).exit_code == 0
    assert pool.started == 2


def no_warm(call: Invocation) -> str:
    """Why `call` goes cold: the plan is a typed reason, never a Plan, for it."""
    found = plan(call)
    assert isinstance(found, NoWarm), found
    return found.reason


def test_what_a_warm_container_cannot_serve_exactly_goes_cold(tmp_path: Path, probe_image: str) -> None:
    call = Invocation(name=probe_image, image=probe_image, sandbox=SANDBOX)
    assert "writable" in no_warm(replace(call, sandbox=replace(SANDBOX, read_only_root=False)))
    assert "always" in no_warm(replace(call, sandbox=replace(SANDBOX, image_pull_policy="always")))
    assert "not present" in no_warm(replace(call, image="fnrun-test/no-such-image:v0"))


def test_the_staging_directory_holds_exactly_the_call_s_tree(tmp_path: Path) -> None:
    from orchestrator.runtimes.container.warm import local as staging

    first = local(tmp_path, "first", {"fn.yaml": "a\n", "old.txt": "gone later\n"})
    (first / "sub").mkdir()
    (first / "sub" / "deep.txt").write_text("deep\n")
    os.chmod(first / "sub", 0o500)
    (first / "link").symlink_to("fn.yaml")
    second = local(tmp_path, "second", {"fn.yaml": "b\n"})
    os.chmod(second, 0o750)
    area = staging.make_staging("test")
    try:
        staging.fill(area, first)
        assert sorted(p.relative_to(area).as_posix() for p in area.rglob("*")) == ["fn.yaml", "link", "old.txt", "sub", "sub/deep.txt"]
        assert os.readlink(area / "link") == "fn.yaml" and (area / "sub").stat().st_mode & 0o777 == 0o500
        staging.fill(area, second)
        assert [p.name for p in area.iterdir()] == ["fn.yaml"] and (area / "fn.yaml").read_text() == "b\n"
        assert area.stat().st_mode & 0o777 == 0o750
        assert (first / "sub" / "deep.txt").read_text() == "deep\n", "the source is never touched"
    finally:
        staging.remove(area)
    assert not area.exists()
    os.chmod(first / "sub", 0o700)


def test_a_call_that_runs_out_of_memory_costs_only_its_container(pool: WarmPool) -> None:
    warm = WarmRuntime(pool, ContainerRuntime())
    small = replace(SANDBOX, memory=64 * 1024 * 1024)
    hog = Invocation(name="hog", image=require_base_image(), args=("python3", "-c", "x = bytearray(512 * 1024 * 1024); x[::4096] = b'1' * len(x[::4096])"),
                     sandbox=small)
    out = warm.run(hog, b"")
    assert out.exit_code == 137, out.stderr  # killed by the kernel, as in a cold container
    after = warm.run(replace(hog, args=("python3", "-c", "print('fine')")), b"")
    assert after.exit_code == 0 and after.stdout == b"fine\n"
    assert pool.started == 2, "the container the kernel killed in was not used again"


def test_a_step_s_plan_from_the_start_serves_only_that_very_call(pool: WarmPool) -> None:
    from orchestrator.runtimes.container.warm.plan import Planned

    base = require_base_image()
    planned_call = Invocation(name="says", image=base, args=("python3", "-c", "print('planned')"), sandbox=SANDBOX)
    found = plan(planned_call)
    assert isinstance(found, Plan)
    other = replace(planned_call, args=("python3", "-c", "print('other')"))
    assert WarmRuntime(pool, ContainerRuntime(), planned=Planned(planned_call, found, True)).run(other, b"").stdout == b"other\n"
    assert WarmRuntime(pool, ContainerRuntime(), planned=Planned(planned_call, found, True)).run(planned_call, b"").stdout == b"planned\n"
    assert pool.started == 1 and pool.served == 2
    too_big = WarmRuntime(pool, ContainerRuntime(), planned=Planned(planned_call, found, False))  # its /local was too big to copy
    assert too_big.run(planned_call, b"").stdout == b"planned\n"
    assert pool.served == 2, "a step whose /local did not fit ran cold"


def test_a_container_no_remaining_call_can_use_goes_and_a_later_call_still_runs(pool: WarmPool) -> None:
    call = Invocation(name="says", image=require_base_image(), args=("python3", "-c", "print('fine')"), sandbox=SANDBOX)
    found = plan(call)
    assert isinstance(found, Plan)
    warm = WarmRuntime(pool, ContainerRuntime())
    assert warm.run(call, b"").exit_code == 0
    pool.trim(found.key, 0)  # no step of the run needs it any more: it goes now
    assert warm.run(call, b"").stdout == b"fine\n"
    assert pool.started == 2, "the trimmed container was not used again"
