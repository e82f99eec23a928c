"""Warm containers live exactly as long as their fnrun: gone after Ctrl-C and SIGTERM, and after a
SIGKILL of fnrun found by their labels and removed by the next fnrun on the engine."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import docker
import pytest

from orchestrator.runtimes.container.orphans import alive
from orchestrator.runtimes.container.settings import LABEL_PID
from orchestrator.runtimes.container.warm.plan import LABEL_WARM, process_started
from testing.pipeline_helpers import REPO, fnrun, interrupt_when_running, snapshot, write_package
from testing.runtime_fixtures import api, containers_of

SLEEP, LABEL = "fnrun-test/sleep:v1", "fnrun-test/label:v1"
WARM = {"FNRUN_CACHE": "0", "FNRUN_WARM": "1"}


def kptfile(steps: list[tuple[str, dict[str, str]]]) -> str:
    text = "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: pkg\npipeline:\n  mutators:\n"
    for image, data in steps:
        text += f"  - image: {image}\n    configMap:\n" + "".join(f'      {k}: "{v}"\n' for k, v in data.items())
    return text


def package(root: Path, steps: list[tuple[str, dict[str, str]]]) -> Path:
    return write_package(root, {"Kptfile": kptfile(steps), "cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n"})


def render(root: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "orchestrator", "render", str(root)], stderr=subprocess.PIPE, text=True,
                            cwd=REPO, env={**os.environ, **WARM})


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_an_interrupted_warm_run_leaves_no_container(test_images: None, tmp_path: Path, signum: int) -> None:
    root = package(tmp_path / "pkg", [(SLEEP, {"seconds": "60"})] * 3)
    before = snapshot(root)
    proc = render(root)
    stderr = interrupt_when_running(proc, {"label": [f"{LABEL_PID}={proc.pid}", f"{LABEL_WARM}=1"]}, signum)
    assert proc.returncode != 0
    assert "Traceback" not in stderr
    assert containers_of(proc.pid) == []
    assert snapshot(root) == before


def test_the_next_fnrun_removes_what_a_killed_one_left(test_images: None, tmp_path: Path) -> None:
    root = package(tmp_path / "pkg", [(SLEEP, {"seconds": "60"})] * 3)
    proc = render(root)
    try:
        interrupt_when_running(proc, {"label": [f"{LABEL_PID}={proc.pid}", f"{LABEL_WARM}=1"]}, signal.SIGKILL)
        orphans = containers_of(proc.pid)
        assert orphans, "a SIGKILL leaves the warm container behind"
        other = package(tmp_path / "other", [(LABEL, {"a": "1"}), (LABEL, {"b": "2"})])
        result = fnrun("render", str(other), env=WARM)
        assert result.code == 0, result
        assert containers_of(proc.pid) == [], "the next warm run removed the orphans"
    finally:
        for leftover in containers_of(proc.pid):
            api().remove_container(leftover["Id"], force=True)


def test_a_process_is_told_from_one_that_reused_its_pid() -> None:
    me = os.getpid()
    assert alive(me, process_started(me) or "")
    assert not alive(me, "1")  # this pid, but started at another time: not the owner
    assert not alive(0, "")


def test_an_unchanged_rerender_with_warm_containers_and_a_warm_cache_starts_no_container(test_images: None, tmp_path: Path) -> None:
    from testing.runtime_fixtures import run_counting_containers

    root = package(tmp_path / "pkg", [(LABEL, {f"x{n}": "1"}) for n in range(4)])
    env = {"FNRUN_CACHE": "1", "FNRUN_CACHE_DIR": str(tmp_path / "cache"), "FNRUN_WARM": "1"}
    first, created = run_counting_containers(env, "render", str(root), "--check")
    # four calls, at most two warm containers: one serves a call while the other holds the next one
    assert first.returncode == 3 and 1 <= len(created) <= 2, first.stderr
    second, created_again = run_counting_containers(env, "render", str(root), "--check")
    assert second.returncode == 3, second.stderr
    assert created_again == []


def test_a_function_killed_from_outside_fails_its_run_and_leaves_no_container(test_images: None, tmp_path: Path) -> None:
    root = package(tmp_path / "pkg", [(SLEEP, {"seconds": "60"})] * 3)
    before = snapshot(root)
    proc = render(root)
    client = docker.from_env()
    try:
        deadline = time.monotonic() + 120
        victim = None
        while victim is None and time.monotonic() < deadline:
            for found in client.containers.list(filters={"label": [f"{LABEL_PID}={proc.pid}", f"{LABEL_WARM}=1"]}):
                top = found.top()
                column = top["Titles"].index("PID")
                victim = next((int(p[column]) for p in top["Processes"] if "/fn/main.py" in p[-1]), None)
            time.sleep(0.2)
        assert victim is not None, "the function never ran"
        os.kill(victim, signal.SIGKILL)  # the function's process, from this machine
        _, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 1 and "exit code 137" in stderr, stderr
    assert containers_of(proc.pid) == []
    assert snapshot(root)["cm.yaml"] == before["cm.yaml"]  # the Kptfile records the failure, as kpt's does
