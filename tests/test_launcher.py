"""The launcher (orchestrator.launch): `fnrun run --image` starts its container before fnrun is
imported, the run adopts it, and no container is ever left behind, whatever ends the command.
Each CLI run is a new process whose pid is on its containers' fnrun.pid label, so "left behind"
is checked on this process's containers only. Behaviour only; the speed is bench/bench_run.py's."""

from __future__ import annotations

import signal
import uuid
from pathlib import Path

import docker
import pytest

from orchestrator.launch import _early_container
from orchestrator.option_schema import BY_SPELLING, CommandLine, read
from testing.launching import STARTED, launch, said, signalled_at_start, signalled_in_function
from testing.pipeline_helpers import snapshot, write_package
from testing.runtime_fixtures import containers_of

IDENTITY, LABEL, FAIL, SLEEP = "fnrun-test/identity:v1", "fnrun-test/label:v1", "fnrun-test/fail:v1", "fnrun-test/sleep:v1"


def package(root: Path) -> Path:
    return write_package(root, {
        "app/deploy.yaml": "# the web tier\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web  # keep me\nspec:\n  replicas: 2\n",
        "app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  k: v\n",
    })


def test_the_run_adopts_the_early_container_and_removes_it(tmp_path: Path, test_images: None) -> None:
    root = package(tmp_path / "pkg")
    before = snapshot(root)
    done, pid = launch("run", str(root), "--image", IDENTITY, "--image-pull-policy", "never")
    assert done.returncode == 0, done.stderr
    started = STARTED.search(done.stderr)
    assert started is not None, done.stderr
    assert f"the run adopted container {started.group(1)}" in done.stderr
    assert "[ok] fnrun-test/identity:v1" in done.stderr
    assert snapshot(root) == before
    assert containers_of(pid) == []


def test_output_is_the_same_with_and_without_the_early_start(tmp_path: Path, test_images: None) -> None:
    outputs = []
    for early in ("1", "0"):
        root = package(tmp_path / f"pkg{early}")
        args = ("run", str(root), "--image", LABEL, "--memory", "256m", "-e", "TIER=web", "--match-kind", "Deployment", "--", "team=web")
        done, pid = launch(*args, env={"FNRUN_EARLY_START": early})
        assert done.returncode == 0, done.stderr
        assert ("adopted container" in done.stderr) == (early == "1"), done.stderr
        printed, _ = launch("run", str(root), "--image", LABEL, "--output", "-", "--", "team=web", env={"FNRUN_EARLY_START": early})
        assert printed.returncode == 0, printed.stderr
        outputs.append(({k: v[0] for k, v in snapshot(root).items()}, printed.stdout, said(done.stderr)))
        assert containers_of(pid) == []
    assert outputs[0] == outputs[1]
    assert b"team: web" in outputs[0][0]["app/deploy.yaml"] and b"team" not in outputs[0][0]["app/cm.yaml"]


def test_only_an_identical_create_request_adopts_the_early_container(test_images: None) -> None:
    """The run adopts the launcher's container only for the very request it would send itself;
    any other request gets None (the run creates its own) and `finish` removes the early one."""
    from orchestrator.runtimes.container.early import EarlyContainer
    from orchestrator.runtimes.container.remote import unix_socket
    from orchestrator.runtimes.container.settings import create_body
    from orchestrator.runtimes.protocol import Invocation

    client = docker.from_env()
    for adopt in (False, True):
        body = create_body(Invocation(name=IDENTITY, image=IDENTITY), {})
        body["Labels"]["fnrun.test"] = mark = f"launcher-{uuid.uuid4().hex}"
        early = EarlyContainer(str(unix_socket()), body)
        early.begin()
        other = {**body, "HostConfig": {**body["HostConfig"], "Memory": 1 << 30}}
        assert early.adopt(other) is None
        adopted = early.adopt(dict(body)) if adopt else None
        early.finish()
        left = client.containers.list(all=True, filters={"label": f"fnrun.test={mark}"})
        if adopt:
            assert adopted is not None and [c.id for c in left] == [adopted.container_id]  # the adopter's to remove
            adopted.socket.close()
            left[0].remove(force=True)
        else:
            assert left == []


@pytest.mark.parametrize(
    "args, why",
    [
        (("--image", "fnrun-test/no-such-image:v1", "--image-pull-policy", "never"), "no-such-image:v1 is not present"),
        (("--image", IDENTITY, "--timeout", "soon"), "--timeout"),  # the rest is click's wording
        (("--image", FAIL), "failing on purpose"),
    ],
)
def test_failures_after_the_early_start_leave_no_container(tmp_path: Path, test_images: None, args: tuple[str, ...], why: str) -> None:
    root = package(tmp_path / "pkg")
    before = snapshot(root)
    done, pid = launch("run", str(root), *args)
    assert done.returncode != 0
    assert why in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert snapshot(root) == before
    assert containers_of(pid) == []


def test_a_missing_package_is_reported_as_ever_and_its_container_removed(tmp_path: Path, test_images: None) -> None:
    done, pid = launch("run", str(tmp_path / "nowhere"), "--image", IDENTITY)
    assert done.returncode == 2 and "nowhere: does not exist" in done.stderr, done.stderr
    assert STARTED.search(done.stderr) and "removed unused container" in done.stderr, done.stderr
    assert containers_of(pid) == []


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
@pytest.mark.parametrize("when", [0.05, 0.3])
def test_a_signal_during_start_up_leaves_no_container(tmp_path: Path, test_images: None, signum: int, when: float) -> None:
    """The signal lands while fnrun imports itself (the container being created or started) or
    just after: wherever it lands, the container goes."""
    root = package(tmp_path / "pkg")
    proc, stderr = signalled_at_start(["run", str(root), "--image", SLEEP, "--", "seconds=30"], signum, when)
    assert proc.returncode != 0, stderr  # (a signal inside the interpreter's own start-up may still print a traceback)
    assert containers_of(proc.pid) == []


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_while_the_function_runs_leaves_no_container(tmp_path: Path, test_images: None, signum: int) -> None:
    root = package(tmp_path / "pkg")
    before = snapshot(root)
    proc, stderr = signalled_in_function(["run", str(root), "--image", SLEEP, "--", "seconds=60"], "sleep: sleeping", signum)  # once the function has its input
    assert proc.returncode == (143 if signum == signal.SIGTERM else 130), stderr
    assert "interrupted" in stderr and "nothing was written" in stderr, stderr
    assert "Traceback" not in stderr, stderr
    assert snapshot(root) == before
    assert containers_of(proc.pid) == []


def test_a_cache_that_may_hit_starts_nothing_early(tmp_path: Path, test_images: None) -> None:
    root = package(tmp_path / "pkg")
    cache = {"FNRUN_CACHE": "1", "FNRUN_CACHE_DIR": str(tmp_path / "cache")}
    first, _ = launch("run", str(root), "--image", IDENTITY, env=cache)  # an empty cache cannot hit
    assert first.returncode == 0 and "adopted container" in first.stderr, first.stderr
    again, pid = launch("run", str(root), "--image", IDENTITY, env=cache)
    assert again.returncode == 0, again.stderr
    assert "fnrun launcher" not in again.stderr, again.stderr  # no container at all: the result is cached
    assert containers_of(pid) == []
    forced, _ = launch("run", str(root), "--image", IDENTITY, "--no-cache", env=cache)
    assert "adopted container" in forced.stderr, forced.stderr


@pytest.mark.parametrize(
    "args, env",
    [
        (["list", "pkg"], {}),
        (["run", "pkg"], {}),  # declared functions: only the package says which
        (["run", "pkg", "--image", IDENTITY], {"FNRUN_EARLY_START": "0"}),
        (["run", "pkg", "--image", IDENTITY, "--mount", "type=bind,src=a,dst=/a"], {}),
        (["run", "pkg", "--image", IDENTITY, "--fn-config", "fn.yaml"], {}),
        (["run", "pkg", "--image", IDENTITY, "--save"], {}),
        (["run", "pkg", "--image", IDENTITY, "-qv"], {}),
        (["run", "pkg", "--image", IDENTITY, "--image-pull-policy", "always"], {}),
        (["run", "pkg", "--image", IDENTITY, "--pids-limit", "many"], {}),
        (["run", "pkg", "--image", IDENTITY, "--cpus", "inf"], {}),
        (["run", "pkg", "--image", IDENTITY, "--memory", "lots"], {}),
        (["run", "pkg", "--image", IDENTITY], {"DOCKER_HOST": "tcp://127.0.0.1:2375"}),
        (["run", "pkg", "--image", IDENTITY], {"DOCKER_HOST": "ssh://me@engine"}),
        (["run", "pkg", "--image", "fnrun/set-labels:v1"], {"FNRUN_BUILTIN": "1"}),
        (["run", "pkg", "--image", IDENTITY], {"FNRUN_BUILTIN_CATALOG": "1"}),
    ],
)
def test_what_the_launcher_leaves_to_the_ordinary_path(monkeypatch: pytest.MonkeyPatch, args: list[str], env: dict[str, str]) -> None:
    monkeypatch.setenv("FNRUN_CACHE", "0")
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    assert _early_container(args) is None


def test_what_the_launcher_starts_early(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FNRUN_CACHE", "0")
    monkeypatch.delenv("DOCKER_HOST", raising=False)
    early = _early_container(["run", "pkg", "--image=example.com/x:v1", "-e", "A=1", "--cpus", "0.5", "--no-builtin", "--", "--image=y", "k=v"])
    assert early is not None
    body = early.body
    assert body["Image"] == "example.com/x:v1" and "A=1" in body["Env"] and body["HostConfig"]["NanoCpus"] == 500_000_000
    assert body["HostConfig"]["NetworkMode"] == "none" and body["User"] == "65534:65534"
    assert read(["pkg", "--image", "x", "--", "--unknown"], BY_SPELLING) == CommandLine({"image": ["x"]}, ["pkg"], ["--unknown"])
    assert read(["pkg", "--image"], BY_SPELLING) is None
    assert read(["pkg", "-i", "example.com/x:v1"], BY_SPELLING) == CommandLine({"image": ["example.com/x:v1"]}, ["pkg"], None)  # kpt's spelling
    assert read(["pkg", "-i=example.com/x:v1"], BY_SPELLING) is None  # the CLI's parser takes "=example.com/x:v1" as the value
    # a short name is kpt's catalog's once the CLI adds the prefix: not this image, nothing early
    assert _early_container(["run", "pkg", "-i", "x:v1", "--no-builtin"]) is None
