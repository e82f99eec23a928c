"""Containers started ahead and independent work in parallel: every
pre-started container is removed on every path, and a parallel run says and writes exactly what
the serial run (--jobs 1) does. Behaviour only; the speed is bench/bench_render.py's."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import docker
import pytest

from orchestrator.resource import Resource
from orchestrator.run.units import Executed, Unit, run_units
from orchestrator.runtimes.container.settings import LABEL_PID
from orchestrator.runtimes.protocol import Invocation, Sandbox
from testing.pipeline_helpers import REPO, assert_one_line_error, fnrun, function_config, interrupt_when_running, snapshot, write_package

LABEL, FAIL, SLEEP = "fnrun-test/label:v1", "fnrun-test/fail:v1", "fnrun-test/sleep:v1"
# A container per call, started ahead: what these tests are about (warm containers: test_warm*.py)
NO_CACHE = {"FNRUN_CACHE": "0", "FNRUN_WARM": "0"}


def kptfile(name: str, steps: list[tuple[str, dict[str, str]]]) -> str:
    text = f"apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: {name}\n"
    if steps:
        text += "pipeline:\n  mutators:\n"
        for image, data in steps:
            text += f"  - image: {image}\n    configMap:\n" + "".join(f'      {k}: "{v}"\n' for k, v in data.items())
    return text


def cm(name: str) -> str:
    return f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\ndata:\n  k: v\n"


def siblings(root: Path, count: int = 4, extra: list[tuple[str, dict[str, str]]] | None = None) -> Path:
    """A root package whose subpackages each run two steps; the root's pipeline runs last."""
    files = {"Kptfile": kptfile("root", [(LABEL, {"root": "yes"})])}
    for n in range(count):
        files[f"sub{n}/Kptfile"] = kptfile(f"sub{n}", [(LABEL, {f"a{n}": "yes"}), *(extra or []), (LABEL, {f"b{n}": "yes"})])
        files[f"sub{n}/cm.yaml"] = cm(f"cm{n}")
        files[f"sub{n}/deeper/Kptfile"] = kptfile(f"deeper{n}", [(LABEL, {f"d{n}": "yes"})])
        files[f"sub{n}/deeper/cm.yaml"] = cm(f"deep{n}")
    return write_package(root, files)


def mine(pid: int) -> list:
    return docker.from_env().containers.list(all=True, filters={"label": f"{LABEL_PID}={pid}"})


def run_cli(*args: str) -> tuple[subprocess.CompletedProcess, int]:
    proc = subprocess.Popen([sys.executable, "-m", "orchestrator", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO, env={**os.environ, **NO_CACHE})
    stdout, stderr = proc.communicate(timeout=300)
    return subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr), proc.pid


def untimed(text: str) -> str:
    """Durations differ from run to run; nothing else may."""
    text = re.sub(r'"duration": [0-9.e-]+', '"duration": 0', text)
    text = re.sub(r"duration: [0-9.e-]+", "duration: 0", text)
    return re.sub(r"\d+\.\d\ds\b", "0.00s", text)


def tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


# -- every pre-started container goes ---------------------------------------------------------


def test_a_prestarted_container_runs_the_function_and_unclaimed_ones_are_removed(test_images: None, tmp_path: Path) -> None:
    from orchestrator.runtimes.container import live, runtime as container
    from orchestrator.runtimes.container.prestart import LABEL_PRESTARTED, PrestartedRuntime, Prestarter

    live.begin()
    call = Invocation(name=LABEL, image=LABEL, sandbox=Sandbox(image_pull_policy="never"))
    prestarter = Prestarter(jobs=2, engine=container.Engine())
    try:
        prestarter.plan([(0, call), (1, call), (2, call)])
        mine_prestarted = {"label": [f"{LABEL_PID}={os.getpid()}", f"{LABEL_PRESTARTED}=1"]}
        deadline = time.monotonic() + 60
        while len(docker.from_env().containers.list(filters=mine_prestarted)) < 3 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert len(docker.from_env().containers.list(filters=mine_prestarted)) == 3  # running, waiting on stdin
        stdin = b'{"apiVersion":"config.kubernetes.io/v1","kind":"ResourceList","items":[{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"}}],"functionConfig":{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"set":"yes"}}}'
        output = PrestartedRuntime(prestarter, 1, container.ContainerRuntime()).run(call, stdin)
        assert output.exit_code == 0 and b"set: " in output.stdout
        prestarter.discard(2)
    finally:
        prestarter.close()
    assert mine(os.getpid()) == []


def test_every_container_is_removed_after_a_parallel_render(test_images: None, tmp_path: Path) -> None:
    siblings(tmp_path / "pkg")
    result, pid = run_cli("render", str(tmp_path / "pkg"), "--jobs", "3")
    assert result.returncode == 0, result.stderr
    assert mine(pid) == []


def test_a_failing_step_removes_the_unused_prestarted_containers(test_images: None, tmp_path: Path) -> None:
    root = write_package(tmp_path / "pkg", {"Kptfile": kptfile("p", [(LABEL, {"a": "1"}), (FAIL, {"message": "boom"}), *[(LABEL, {f"x{n}": "1"}) for n in range(5)]]), "cm.yaml": cm("c")})
    before = snapshot(root)
    result, pid = run_cli("render", str(root), "--jobs", "2", "--no-status")
    assert result.returncode == 1 and "boom" in result.stderr
    assert mine(pid) == []
    assert snapshot(root) == before


def test_an_earlier_failure_in_a_sibling_removes_everything(test_images: None, tmp_path: Path) -> None:
    siblings(tmp_path / "pkg", extra=[(FAIL, {"message": "sibling failed"})])
    result, pid = run_cli("render", str(tmp_path / "pkg"), "--jobs", "4", "--no-status")
    assert result.returncode == 1 and "sibling failed" in result.stderr
    assert mine(pid) == []


@pytest.mark.parametrize("layout", ["pipeline", "siblings"])
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_interrupting_a_run_removes_every_container(test_images: None, tmp_path: Path, signum: int, layout: str) -> None:
    if layout == "pipeline":  # one slow step, the rest pre-started behind it
        files = {"Kptfile": kptfile("p", [(SLEEP, {"seconds": "60"}), *[(LABEL, {f"x{n}": "1"}) for n in range(4)]]), "cm.yaml": cm("c")}
    else:  # slow siblings running in worker threads
        files = {"Kptfile": kptfile("root", [(LABEL, {"root": "1"})])}
        for n in range(3):
            files[f"sub{n}/Kptfile"] = kptfile(f"sub{n}", [(SLEEP, {"seconds": "60"}), (LABEL, {"x": "1"})])
            files[f"sub{n}/cm.yaml"] = cm(f"c{n}")
    root = write_package(tmp_path / "pkg", files)
    before = snapshot(root)
    proc = subprocess.Popen([sys.executable, "-m", "orchestrator", "render", str(root), "--jobs", "3"], stderr=subprocess.PIPE, text=True, cwd=REPO, env={**os.environ, **NO_CACHE})
    stderr = interrupt_when_running(proc, {"label": f"{LABEL_PID}={proc.pid}"}, signum, count=3, settle=1.0)
    assert proc.returncode != 0
    assert "Traceback" not in stderr
    assert mine(proc.pid) == []
    assert snapshot(root) == before


def test_an_unchanged_rerender_with_a_warm_cache_starts_no_container(test_images: None, tmp_path: Path) -> None:
    from testing.runtime_fixtures import run_counting_containers as run_with_events

    siblings(tmp_path / "pkg", 3)
    env = {"FNRUN_CACHE": "1", "FNRUN_CACHE_DIR": str(tmp_path / "cache"), "FNRUN_WARM": "0"}
    first, created = run_with_events(env, "render", str(tmp_path / "pkg"), "--check", "--jobs", "3")
    assert first.returncode == 3 and len(created) == 10, first.stderr  # 3 x 3 steps + the root's, each once
    second, created_again = run_with_events(env, "render", str(tmp_path / "pkg"), "--check", "--jobs", "3")
    assert second.returncode == 3, second.stderr
    assert created_again == []


# -- parallel equals serial --------------------------------------------------------------------


def _compare(tmp_path: Path, make: callable, *args: str) -> None:
    outputs = {}
    for jobs in ("1", "4"):
        root = make(tmp_path / f"jobs{jobs}" / "pkg")
        results = tmp_path / f"jobs{jobs}" / "results"
        result = fnrun(*args[:1], str(root), *args[1:], "--jobs", jobs, "--results-dir", str(results), "--results-format", "json", env=NO_CACHE)
        outputs[jobs] = (result.code, untimed(result.stdout), untimed(result.stderr), tree(root), {k: untimed(v.decode()) for k, v in tree(results).items()})
    assert outputs["1"][0] == 0, outputs["1"][2]
    assert outputs["4"] == outputs["1"]


def test_a_parallel_render_of_sibling_packages_equals_the_serial_one(test_images: None, tmp_path: Path) -> None:
    _compare(tmp_path, lambda root: siblings(root, 4), "render", "-v")


def test_a_parallel_run_of_functions_with_disjoint_scopes_equals_the_serial_one(test_images: None, tmp_path: Path) -> None:
    def package(root: Path) -> Path:
        files = {"top.yaml": cm("top"), "all.yaml": function_config(LABEL, {"everywhere": "yes"}, name="all")}
        for name in ("a", "b", "c"):
            files[f"{name}/cm.yaml"] = cm(f"cm-{name}")
            files[f"{name}/fn.yaml"] = function_config(LABEL, {f"in-{name}": "yes"}, name=f"fn-{name}")
            files[f"{name}/inner/fn.yaml"] = function_config(LABEL, {f"inner-{name}": "yes"}, name=f"inner-{name}")
        return write_package(root, files)

    _compare(tmp_path, package, "run", "-v")


def test_jobs_must_be_a_positive_number(tmp_path: Path) -> None:
    siblings(tmp_path / "pkg", 1)
    assert_one_line_error(fnrun("render", str(tmp_path / "pkg"), "--jobs", "0"), "--jobs", code=2)
    assert_one_line_error(fnrun("render", str(tmp_path / "pkg"), env={"FNRUN_JOBS": "many"}), "FNRUN_JOBS", code=2)


def test_a_unit_whose_scope_a_sibling_changed_runs_again_in_serial_order() -> None:
    """A function may place a resource in a sibling's directory; the sibling, run ahead on what it
    saw before, is then run again at its turn, so the result is the serial one."""
    from orchestrator.events import Events, FunctionReport
    from orchestrator.kinds import Kind
    from orchestrator.select.functions import FunctionSpec

    def resource(path: str, name: str) -> Resource:
        return Resource({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "annotations": {"internal.config.kubernetes.io/path": path}}})

    specs = [FunctionSpec(kind=Kind.CONTAINER, image="x", declared_in=f"{d}/fn.yaml") for d in ("a", "b", "c")]
    start = [resource("a/x.yaml", "a"), resource("b/x.yaml", "b"), resource("c/x.yaml", "c")]
    seen: dict[int, list[list[str]]] = {0: [], 1: [], 2: []}

    def execute(index: int, current: list[Resource], shown: Events, cancel: object) -> Executed:
        from orchestrator.merge import scope

        items, positions = scope.split(specs[index], current)
        seen[index].append([r.path or "" for r in items])
        output = list(items)
        if index == 0:
            time.sleep(0.2)  # the others run ahead meanwhile
            output.append(resource("b/from-a.yaml", "from-a"))  # into its sibling's directory
        shown.finished(specs[index], FunctionReport(str(index), Kind.CONTAINER))
        return Executed(scope.merge_back(current, positions, output), [(specs[index], output)], index)

    class Shown(Events):
        def __init__(self) -> None:
            self.order: list[int] = []

        def finished(self, spec: FunctionSpec, report: FunctionReport) -> None:
            self.order.append(int(report.name))

    def run(jobs: int) -> tuple[list[str | None], list[int], list[int]]:
        shown, committed = Shown(), []
        final = run_units([Unit(d, True) for d in ("a", "b", "c")], start, shown, execute, lambda i, done: committed.append(done.payload), jobs)
        return [r.path for r in final], shown.order, committed

    serial = run(1)
    for key in seen:
        seen[key].clear()
    parallel = run(3)
    assert parallel == serial
    assert seen[1][-1] == ["b/from-a.yaml", "b/x.yaml"]  # b ran (again) on what a gave it
    assert len(seen[1]) == 2 and seen[1][0] == ["b/x.yaml"]  # ... after running ahead on the old
    assert len(seen[2]) == 1  # c's scope did not change: its run ahead was committed
