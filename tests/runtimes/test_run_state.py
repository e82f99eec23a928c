"""A run owns what its functions run on (runtimes.Registry: the engine connection, the result
cache, the host fork server, the early container), and ends it when its functions are done; a
server's Evaluator owns one for the server's life and lends it to each call. Two runs in one
process share none of it; after a run, nothing it started is left: no fork server, no container."""

from __future__ import annotations

import io
import os
import threading
from pathlib import Path

import pytest

from orchestrator import api, procstat
from orchestrator.kinds import Kind
from orchestrator.render.runner import RenderOptions, render_package
from orchestrator.requests import Output, RenderRequest, SandboxSettings, Speed
from orchestrator.run.options import RunOptions
from orchestrator.runtimes import Invocation, Registry, Sandbox, Serving
from orchestrator.settings import Settings
from testing.pipeline_helpers import test_images  # noqa: F401 - fixture
from testing.runtime_fixtures import containers_of
from testing.stress import descendants

SET_LABELS = "ghcr.io/kptdev/krm-functions-catalog/set-labels:v0.2.0"  # fnrun's own code in a fork (--builtin-catalog)
IDENTITY = "fnrun-test/identity:v1"  # a container
KPTFILE = f"""apiVersion: kpt.dev/v1
kind: Kptfile
metadata:
  name: root
pipeline:
  mutators:
  - image: {SET_LABELS}
    configMap:
      team: {{team}}
  - image: {IDENTITY}
"""
CONFIGMAP = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  a: b\n"


def package(root: Path, team: str) -> Path:
    root.mkdir(parents=True)
    (root / "Kptfile").write_text(KPTFILE.format(team=team))
    (root / "cm.yaml").write_text(CONFIGMAP)
    return root


def alive(pid: int) -> bool:
    return procstat.running(procstat.read(pid))


def run_options() -> RunOptions:
    return RunOptions(sandbox=Sandbox(image_pull_policy="never"), builtin_catalog=True, cache=True, warm=False)


@pytest.mark.engine
def test_two_runs_in_threads_each_have_their_own_runtimes_and_leave_nothing(tmp_path: Path, test_images: None) -> None:  # noqa: F811
    """Each run's fork server, engine connection and result cache are its own, and closing its
    registry ends its fork server while the other run's goes on."""
    seen: dict[str, dict[str, object]] = {}
    failures: list[BaseException] = []
    registries = {team: Registry() for team in ("red", "blue")}
    ran = {team: threading.Event() for team in registries}
    checked = threading.Event()  # a fork server lives no longer than the thread that started it: each run's thread waits

    def render(team: str) -> None:
        registry = registries[team]
        try:
            root = package(tmp_path / team, team)
            outcome = render_package(root, RenderOptions(run_options(), record_status=False), registry=registry, in_place=False)
            assert outcome.failure is None, outcome.failure
            labels = [r.data["metadata"].get("labels") for r in outcome.resources if r.data["kind"] == "ConfigMap"]
            cache = registry.caching(registry(Kind.CONTAINER), Settings().cache_dir).cache
            seen[team] = {"labels": labels, "fork": registry.forks.pid, "client": registry.engine.api(), "cache": cache,
                          "container": registry(Kind.CONTAINER)}
        except BaseException as err:  # noqa: BLE001 - carried to the test's thread
            failures.append(err)
        finally:
            ran[team].set()
            checked.wait(120)

    threads = [threading.Thread(target=render, args=(team,)) for team in registries]
    for thread in threads:
        thread.start()
    try:
        for event in ran.values():
            assert event.wait(120)
        assert not failures, failures
        red, blue = seen["red"], seen["blue"]
        assert red["labels"] == [{"team": "red"}] and blue["labels"] == [{"team": "blue"}]
        assert isinstance(red["fork"], int) and isinstance(blue["fork"], int) and red["fork"] != blue["fork"]
        assert alive(red["fork"]) and alive(blue["fork"])
        for key in ("client", "cache", "container"):
            assert red[key] is not blue[key], key
        registries["red"].close()
        assert not alive(red["fork"]) and alive(blue["fork"])  # one run's end is not the other's
        registries["blue"].close()
        assert not alive(blue["fork"])
    finally:
        checked.set()
        for thread in threads:
            thread.join(120)
        for registry in registries.values():
            registry.close()
    assert containers_of(os.getpid()) == []


@pytest.mark.engine
def test_after_a_run_its_fork_server_is_gone_and_no_container_is_left(tmp_path: Path, test_images: None) -> None:  # noqa: F811
    """The library's entry point makes the run's registry and ends it: a fork server no longer
    outlives the run that started it (nor does any child of this process)."""
    root = package(tmp_path / "pkg", "green")
    before = set(descendants(os.getpid()))
    request = RenderRequest(directory=str(root), sandbox=SandboxSettings(image_pull_policy="never"), output=Output(quiet=True),
                            speed=Speed(builtin_catalog=True, cache=False), record_status=False)
    api.render(request, stdout=io.StringIO())
    assert "team: green" in (root / "cm.yaml").read_text()
    assert set(descendants(os.getpid())) - before == set()
    assert containers_of(os.getpid()) == []


@pytest.mark.engine
def test_a_server_lends_its_registry_and_pool_to_every_call_and_ends_them(test_images: None) -> None:  # noqa: F811
    """`fnrun serve`'s Evaluator: calls from many threads share its engine connection, its warm
    pool and its fork server (one, started once), each answering its own input; closing it ends
    the fork server and removes every container."""
    from orchestrator.serve.evaluate import Evaluator, Settings as ServeSettings

    evaluator = Evaluator(ServeSettings(sandbox=Sandbox(image_pull_policy="never"), builtin_catalog=True, cache=False, parallel=2))
    assert evaluator.pool is not None and evaluator.pool.engine is evaluator.registry.engine
    answers: dict[str, bytes] = {}
    forks: set[int | None] = set()
    failures: list[BaseException] = []

    def call(name: str) -> None:
        body = (f"apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n"
                f"  metadata:\n    name: {name}\nfunctionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: fn\n"
                f"  data:\n    owner: {name}\n").encode()
        try:
            answers[f"{name}-container"] = evaluator.evaluate(body, IDENTITY).resource_list
            answers[f"{name}-builtin"] = evaluator.evaluate(body, SET_LABELS).resource_list
            forks.add(evaluator.registry.forks.pid)
        except BaseException as err:  # noqa: BLE001 - carried to the test's thread
            failures.append(err)

    try:
        threads = [threading.Thread(target=call, args=(f"c{n}",)) for n in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(120)
        assert not failures, failures
        for n in range(4):
            assert f"name: c{n}\n" in answers[f"c{n}-container"].decode()
            assert f"owner: c{n}" in answers[f"c{n}-builtin"].decode()  # set-labels labelled it with its own config
        assert len(forks) == 1 and None not in forks  # one fork server for every call
        assert evaluator.pool.served >= 1  # calls shared the pool's warm containers
    finally:
        evaluator.close()
    (pid,) = forks
    assert pid is not None and not alive(pid)
    assert containers_of(os.getpid()) == []


def test_a_registry_given_back_adopts_no_early_container() -> None:
    """The run's end gives the launcher's container back: no later call of that registry may
    adopt it (the launcher removes what was not adopted)."""
    from orchestrator.runtimes.container.early import EarlyContainer

    early = EarlyContainer("/nonexistent/engine.sock", {"Image": "x"})
    registry = Registry(early)
    assert registry.early is early
    registry.close()
    assert registry.adopt({"Image": "x"}) is None and registry.early is None


def test_the_run_s_choice_comes_from_its_own_registry() -> None:
    """A builtin step runs on its run's fork server, never another run's."""
    call = Invocation(name="kpt set-labels", image=SET_LABELS)
    with Registry() as one, Registry() as other:
        first = one.choose(Kind.CONTAINER, call, Serving(kpt_catalog=True))
        second = other.choose(Kind.CONTAINER, call, Serving(kpt_catalog=True))
        assert getattr(first, "server", None) is one.forks and getattr(second, "server", None) is other.forks

